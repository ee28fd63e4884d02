// Integer dots of the importance-matrix and ternary types (IQ2_XXS, IQ2_XS, IQ2_S,
// IQ3_XXS, IQ3_S, IQ1_S, IQ1_M, TQ1_0, TQ2_0) with x quantized as llama.cpp's Q8_K (blocks of
// 256), as llama.cpp's CPU backend multiplies them (ggml_vec_dot_iq*_q8_K).
//
// The definition (the portable path, and IQ1/TQ on any path): each super-block of 256 is first
// unpacked into int8 weights q (a grid byte times its sign;
// IQ1: 8 · grid ± 1, the ±1/8 shift made an integer; TQ: the trit -1..1), an integer scale S per
// 4 elements (the type's 2u + 1 per 16 or 32; TQ: 1) and one float D (the f16 d times the type's
// constant: 1/8 for IQ2 and IQ1, 1/4 for IQ3_XXS, 1 for IQ3_S and TQ), so that w = D · S · q
// exactly as llama.cpp's dot reads it. Then, per super-block k with x's scale d_x:
//     isum = Σ_g S_g · Σ_{i in group g of 4} q_i · qx_i     (exact int32: |isum| < 2^26),
//     acc = fma(float(isum), D · d_x, acc)     (step(): one rounding),
// the row's dot being acc. llama.cpp computes the same integer sums (grouped per 32) and
// acc += (d · d_x) · isum, then scales by the constant: the same up to float rounding (the
// constants are powers of 2). The integer sum has no order, so the portable loop and the AVX-512
// VNNI one (|q| as unsigned bytes against x's quants with q's sign) give the same isum, and the
// float step is one shared statement: the same bits. IQ2_XXS, IQ2_XS, IQ2_S, IQ3_XXS, IQ3_S,
// TQ2_0 and TQ1_0 have direct AVX-512 kernels besides (below: no int8 copy; the same isum and
// step), which decode a super-block once for up to 16 tokens (sequences decoded together,
// --parallel). CPUs without AVX-512 VNNI (AVX2, FMA, F16C: quant_dot_avx2_available) take direct
// AVX2 kernels for all nine types (below, as ggml's AVX2 dots; the same isum and step), one token
// or up to 8 per decoded super-block. Prompts: the IQ types' and TQ1_0/TQ2_0's take
// blocks/gemm_iq16.cpp (x at 16 bits).
#include "dot_kinds.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <immintrin.h>

#include "journey/kernels/blocks/layout.h"
#include "journey/kernels/gemv.h"

#include "journey/kernels/half.h"
#include "iq_grids.h"
#include "../avx2_lanes.h"

namespace journey {
namespace {

struct SuperBlock {
    alignas(64) int8_t q[256];
    alignas(64) int32_t S[64];  // per group of 4 elements
    float D;
};

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

// The one float step of a super-block, shared by every path (an explicit fma: the same bits
// whatever the compiler contracts).
inline float step(float acc, int32_t isum, float D, float dx) { return std::fma(float(isum), D * dx, acc); }

// ---- direct AVX-512 kernels (IQ2_XXS, IQ2_XS, IQ2_S, IQ3_XXS, IQ3_S) ------------------------
// As ggml_vec_dot_iq*_q8_K: no int8 copy of the weights. Per chunk c of 64 elements (sub-blocks
// 2c and 2c+1 of 32) the grid entries are gathered straight into a vector of magnitudes g
// (unsigned bytes), the 64 signs become a mask that negates x's quants, vpmaddubsw sums the
// pairs g·(±qx) (int16, |.| <= 2·62·127: no saturation) and vpdpwssd multiplies each pair by its
// sub-block's scale S into 16 int32 lanes. The integer sum is exact, so it equals
// isum_portable's; the float step is step(). (The grid rows by vpgatherqq/vpgatherdd: IQ2_XXS
// took 17.8 ns a super-block against 23.6 with eight scalar loads and inserts, one core, rows in
// cache, 22:45 UTC 6 Dec.)

#define JOURNEY_IQ __attribute__((target("avx512f,avx512bw,avx512vl,avx512vnni,avx512vbmi,avx512bitalg,fma,f16c")))
#define JOURNEY_TQ __attribute__((target("avx512f,avx512bw,avx512vl,avx512vnni,fma,f16c")))  // the ternary kernels' subset

struct Chunks {
    __m512i g[4];      // magnitudes, unsigned bytes
    __mmask64 s[4];    // bit i set: element i negative
    __m512i sc[4];     // the scale of each int16 pair (S in both halves of each int32 lane)
    float D;
};

// ggml's ksigns for 32 7-bit indices at once (IQ2_XXS, IQ2_XS, IQ3_XXS): byte j of v holds index
// j in its low 7 bits (bit 7 is ignored); byte j of the result is the index with its parity in
// bit 7, and qword c of it (sub-blocks 2c, 2c+1) is chunk c's mask.
JOURNEY_IQ inline void signs32(Chunks& ch, __m256i v) {
    const __m256i i7 = _mm256_and_si256(v, _mm256_set1_epi8(0x7f));
    const __m256i parity = _mm256_and_si256(_mm256_popcnt_epi8(i7), _mm256_set1_epi8(1));
    const __m256i m = _mm256_or_si256(i7, _mm256_slli_epi16(parity, 7));
    const __m128i lo = _mm256_castsi256_si128(m), hi = _mm256_extracti128_si256(m, 1);
    ch.s[0] = uint64_t(_mm_cvtsi128_si64(lo));
    ch.s[1] = uint64_t(_mm_extract_epi64(lo, 1));
    ch.s[2] = uint64_t(_mm_cvtsi128_si64(hi));
    ch.s[3] = uint64_t(_mm_extract_epi64(hi, 1));
}

// S per 32 from a dword whose top 4 bits are the scale u (S = 2u + 1), in both int16 halves.
JOURNEY_IQ inline __m512i scale_of_top4(__m512i a) {
    const __m512i S = _mm512_or_si512(_mm512_maskz_slli_epi32(0xFFFF, _mm512_maskz_srli_epi32(0xFFFF, a, 28), 1), _mm512_set1_epi32(1));
    return _mm512_or_si512(S, _mm512_maskz_slli_epi32(0xFFFF, S, 16));
}

JOURNEY_TQ inline float half_at(const unsigned char* p) { return _cvtsh_ss(u16_at(p)); }

// int16 lane w of chunk c takes scale 4c + w/8 of 16 (sub-blocks of 16: IQ2_XS, IQ2_S)
struct Perm16 {
    alignas(64) int16_t idx[4][32];
    constexpr Perm16() : idx() {
        for (int c = 0; c < 4; ++c)
            for (int w = 0; w < 32; ++w) idx[c][w] = int16_t(4 * c + w / 8);
    }
};
constexpr Perm16 kPerm16;

// Scales per 32 (one int32 per sub-block ib in lane ib of sc8, value S · 0x10001): chunk c's
// vector, lanes 0-7 sub-block 2c and 8-15 sub-block 2c+1.
JOURNEY_IQ inline void scales32(Chunks& ch, __m256i sc8) {
    const __m512i s = _mm512_maskz_inserti64x4(0xFF, _mm512_setzero_si512(), sc8, 0);
    for (int c = 0; c < 4; ++c) {
        const __m512i idx = _mm512_mask_blend_epi32(0xFF00, _mm512_set1_epi32(2 * c), _mm512_set1_epi32(2 * c + 1));
        ch.sc[c] = _mm512_maskz_permutexvar_epi32(0xFFFF, idx, s);
    }
}

// Scales per 16 from 8 bytes of two nibbles (low: elements 32ib .. +15, high: +16 .. +31).
JOURNEY_IQ inline void scales16(Chunks& ch, const unsigned char* p) {
    uint64_t v;
    std::memcpy(&v, p, 8);
    const __m128i lo = _mm_cvtsi64_si128(int64_t(v & 0x0f0f0f0f0f0f0f0full));
    const __m128i hi = _mm_cvtsi64_si128(int64_t((v >> 4) & 0x0f0f0f0f0f0f0f0full));
    const __m256i s16 = _mm256_cvtepu8_epi16(_mm_unpacklo_epi8(lo, hi));  // scale j of 16, nibble value
    const __m512i S = _mm512_maskz_inserti64x4(0xFF, _mm512_setzero_si512(), _mm256_add_epi16(_mm256_add_epi16(s16, s16), _mm256_set1_epi16(1)), 0);
    for (int c = 0; c < 4; ++c) ch.sc[c] = _mm512_permutexvar_epi16(_mm512_load_si512(kPerm16.idx[c]), S);
}

template <DType T>
JOURNEY_IQ inline void decode(const unsigned char* b, Chunks& ch) {
    if constexpr (T == DType::IQ2_XXS) {
        // qword ib of qs: sub-block ib's 4 grid bytes, then aux (4 sign indices of 7 bits, u in bits 28-31)
        ch.D = half_at(b) * 0.125f;
        const __m512i qs = _mm512_loadu_si512(b + 2);
        const __m512i at = _mm512_set1_epi64(0x352e2720ll);  // bytes: bits 32, 39, 46, 53 of each qword
        signs32(ch, _mm512_maskz_cvtepi64_epi32(0xFF, _mm512_maskz_multishift_epi64_epi8(~__mmask64(0), at, qs)));
        const __m512i S = scale_of_top4(qs);  // odd dwords
        const __m128i pick = _mm_setr_epi8(0, 1, 2, 3, 8, 9, 10, 11, -1, -1, -1, -1, -1, -1, -1, -1);
        for (int c = 0; c < 4; ++c) {
            const __m128i raw = _mm_loadu_si128(reinterpret_cast<const __m128i*>(b + 2 + 16 * c));
            const __m512i idx = _mm512_maskz_cvtepu8_epi64(0xFF, _mm_shuffle_epi8(raw, pick));
            ch.g[c] = _mm512_mask_i64gather_epi64(_mm512_setzero_si512(), 0xFF, idx, reinterpret_cast<const long long*>(kIq2xxsGrid), 8);
            const __m512i which = _mm512_mask_blend_epi32(0xFF00, _mm512_set1_epi32(4 * c + 1), _mm512_set1_epi32(4 * c + 3));
            ch.sc[c] = _mm512_maskz_permutexvar_epi32(0xFFFF, which, S);
        }
    } else if constexpr (T == DType::IQ3_XXS) {
        // aux: one dword per sub-block (4 sign indices of 7 bits, u in bits 28-31)
        ch.D = half_at(b) * 0.25f;
        const __m256i a = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b + 66));
        const __m256i at = _mm256_set1_epi64x(0x352e2720150e0700ll);  // bits 0, 7, 14, 21, 32, 39, 46, 53
        signs32(ch, _mm256_maskz_multishift_epi64_epi8(0xFFFFFFFFu, at, a));
        const __m512i S = scale_of_top4(_mm512_maskz_inserti64x4(0xFF, _mm512_setzero_si512(), a, 0));
        for (int c = 0; c < 4; ++c) {
            const __m512i idx = _mm512_maskz_cvtepu8_epi32(0xFFFF, _mm_loadu_si128(reinterpret_cast<const __m128i*>(b + 2 + 16 * c)));
            ch.g[c] = _mm512_mask_i32gather_epi32(_mm512_setzero_si512(), 0xFFFF, idx, reinterpret_cast<const int*>(kIq3xxsGrid), 4);
            const __m512i which = _mm512_mask_blend_epi32(0xFF00, _mm512_set1_epi32(2 * c), _mm512_set1_epi32(2 * c + 1));
            ch.sc[c] = _mm512_maskz_permutexvar_epi32(0xFFFF, which, S);
        }
    } else if constexpr (T == DType::IQ3_S) {
        ch.D = half_at(b);
        for (int c = 0; c < 4; ++c) {
            __m512i idx = _mm512_maskz_cvtepu8_epi32(0xFFFF, _mm_loadu_si128(reinterpret_cast<const __m128i*>(b + 2 + 16 * c)));
            idx = _mm512_mask_add_epi32(idx, __mmask16(b[66 + 2 * c] | b[67 + 2 * c] << 8), idx, _mm512_set1_epi32(256));
            ch.g[c] = _mm512_mask_i32gather_epi32(_mm512_setzero_si512(), 0xFFFF, idx, reinterpret_cast<const int*>(kIq3sGrid), 4);
            uint64_t s;
            std::memcpy(&s, b + 74 + 8 * c, 8);
            ch.s[c] = s;
        }
        uint32_t sc4 = u32_at(b + 106);
        alignas(32) int32_t S[8];
        for (int ib = 0; ib < 8; ++ib) S[ib] = int32_t((1 + 2 * ((sc4 >> (4 * ib)) & 0xf)) * 0x10001u);
        scales32(ch, _mm256_load_si256(reinterpret_cast<const __m256i*>(S)));
    } else if constexpr (T == DType::IQ2_XS) {
        ch.D = half_at(b) * 0.125f;
        for (int c = 0; c < 4; ++c) {
            const __m128i raw = _mm_loadu_si128(reinterpret_cast<const __m128i*>(b + 2 + 16 * c));
            const __m512i idx = _mm512_and_si512(_mm512_maskz_cvtepu16_epi64(0xFF, raw), _mm512_set1_epi64(511));
            ch.g[c] = _mm512_mask_i64gather_epi64(_mm512_setzero_si512(), 0xFF, idx, reinterpret_cast<const long long*>(kIq2xsGrid), 8);
        }
        // qword ib of qs: sub-block ib's 4 entries of 16 bits, the sign index in bits 9-15
        const __m512i at = _mm512_set1_epi64(0x39291909ll);  // bits 9, 25, 41, 57
        signs32(ch, _mm512_maskz_cvtepi64_epi32(0xFF, _mm512_maskz_multishift_epi64_epi8(~__mmask64(0), at, _mm512_loadu_si512(b + 2))));
        scales16(ch, b + 66);
    } else if constexpr (T == DType::IQ2_S) {
        ch.D = half_at(b) * 0.125f;
        const __m512i shifts = _mm512_setr_epi64(0, 2, 4, 6, 8, 10, 12, 14);
        for (int c = 0; c < 4; ++c) {
            const __m512i lo = _mm512_maskz_cvtepu8_epi64(0xFF, _mm_loadl_epi64(reinterpret_cast<const __m128i*>(b + 2 + 8 * c)));
            const __m512i qh = _mm512_set1_epi64(int64_t(b[66 + 2 * c] | b[67 + 2 * c] << 8));
            const __m512i hi = _mm512_maskz_slli_epi64(0xFF, _mm512_and_si512(_mm512_maskz_srlv_epi64(0xFF, qh, shifts), _mm512_set1_epi64(3)), 8);
            ch.g[c] = _mm512_mask_i64gather_epi64(_mm512_setzero_si512(), 0xFF, _mm512_or_si512(lo, hi), reinterpret_cast<const long long*>(kIq2sGrid), 8);
            uint64_t s;
            std::memcpy(&s, b + 34 + 8 * c, 8);
            ch.s[c] = s;
        }
        scales16(ch, b + 74);
    }
}

JOURNEY_TQ inline int32_t sum16_i32(__m512i v) {
    const __m256i h = _mm256_add_epi32(_mm512_maskz_extracti64x4_epi64(0xF, v, 0), _mm512_maskz_extracti64x4_epi64(0xF, v, 1));
    __m128i q = _mm_add_epi32(_mm256_castsi256_si128(h), _mm256_extracti128_si256(h, 1));
    q = _mm_add_epi32(q, _mm_shuffle_epi32(q, 0x4e));
    return _mm_cvtsi128_si32(_mm_add_epi32(q, _mm_shuffle_epi32(q, 0xb1)));
}

// One row against n <= kTokens tokens: each super-block decoded once, then every token's exact
// integer sum and step(): out[t · out_stride] has the bits of the token alone (and of the
// portable loop).
constexpr int kTokens = 16;

template <DType T>
JOURNEY_IQ void dot_row_iq_vnni(float* out, int64_t out_stride, const unsigned char* row, int64_t nb,
                                const QuantizedActivations* xs, int n, bool ask) {
    constexpr size_t kBytes = T == DType::IQ2_XXS ? 66 : T == DType::IQ2_XS ? 74 : T == DType::IQ2_S ? 82 : T == DType::IQ3_XXS ? 98 : 110;
    float acc[kTokens];
    for (int t = 0; t < n; ++t) acc[t] = 0.0f;
    const __m512i zero = _mm512_setzero_si512();
    for (int64_t k = 0; k < nb; ++k) {
        const unsigned char* b = row + size_t(k) * kBytes;
        if (ask) ask_ahead<kBytes>(b);
        Chunks ch;
        decode<T>(b, ch);
        for (int t = 0; t < n; ++t) {
            const int8_t* qx = xs[t].q.data() + 256 * k;
            __m512i isum = zero;
#pragma GCC unroll 4
            for (int c = 0; c < 4; ++c) {
                const __m512i x = _mm512_loadu_si512(qx + 64 * c);
                const __m512i sx = _mm512_mask_sub_epi8(x, ch.s[c], zero, x);
                isum = _mm512_dpwssd_epi32(isum, _mm512_maddubs_epi16(ch.g[c], sx), ch.sc[c]);
            }
            acc[t] = step(acc[t], sum16_i32(isum), ch.D, xs[t].d[size_t(k)]);
        }
    }
    for (int t = 0; t < n; ++t) out[t * out_stride] = acc[t];
}

// ---- direct AVX-512 kernels for the ternary types (TQ2_0, TQ1_0) ---------------------------
// As ggml_vec_dot_tq*_q8_K: each chunk of 64 trits is decoded straight into its codes
// c = q + 1 in {0, 1, 2} (unsigned bytes), vpdpbusd sums c·qx into 16 int32 lanes, and x's 16
// sums of 16 quants (Q8_K's bsums, x.sum16) are taken from those lanes: Σ q·qx = Σ c·qx - Σ qx.
// The integer sum is exact, so it is isum_portable's on the unpacked trits (S = 1); the float
// step is step(): the bits of the unpacked path.

struct Codes {
    __m512i c[4];  // chunk c: the codes of elements 64c .. 64c + 63
    float D;
};

// Bytes times 3 and times 9, modulo 256 (ggml's shifts and adds: no 8-bit multiply).
JOURNEY_TQ inline __m512i times3(__m512i v) { return _mm512_add_epi8(v, _mm512_add_epi8(v, v)); }
JOURNEY_TQ inline __m512i times9(__m512i v) { return _mm512_add_epi8(_mm512_and_si512(_mm512_slli_epi16(v, 3), _mm512_set1_epi8(char(0xf8))), v); }
JOURNEY_TQ inline __m128i times3(__m128i v) { return _mm_add_epi8(v, _mm_add_epi8(v, v)); }
JOURNEY_TQ inline __m128i times9(__m128i v) { return _mm_add_epi8(_mm_and_si128(_mm_slli_epi16(v, 3), _mm_set1_epi8(char(0xf8))), v); }

// The trit code of each byte t = uint8(v · 3^n): (3t) >> 8 (unpack()'s rule plus 1), which is
// 1 from t = 86 and 2 from t = 171.
JOURNEY_TQ inline __m512i trit_codes(__m512i t) {
    const __m512i one = _mm512_set1_epi8(1);
    const __m512i c = _mm512_maskz_mov_epi8(_mm512_cmpge_epu8_mask(t, _mm512_set1_epi8(86)), one);
    return _mm512_mask_add_epi8(c, _mm512_cmpge_epu8_mask(t, _mm512_set1_epi8(char(171))), c, one);
}

template <DType T>
JOURNEY_TQ inline void decode_tq(const unsigned char* b, Codes& ch) {
    if constexpr (T == DType::TQ2_0) {
        // element e: bits 2((e % 128) / 32) of qs[32(e / 128) + e % 32] (unpack()'s order), code = the 2 bits
        ch.D = half_at(b + 64);
        for (int h = 0; h < 2; ++h) {
            const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b + 32 * h));
            const __m512i z = _mm512_maskz_broadcast_i64x4(0xFF, v);
            const __m512i m = _mm512_set1_epi8(3);
            ch.c[2 * h] = _mm512_and_si512(_mm512_mask_blend_epi64(0xF0, z, _mm512_srli_epi16(z, 2)), m);
            ch.c[2 * h + 1] = _mm512_and_si512(_mm512_mask_blend_epi64(0xF0, _mm512_srli_epi16(z, 4), _mm512_srli_epi16(z, 6)), m);
        }
    } else {
        // TQ1_0, unpack()'s order: trit n of qs[m] (m < 32) is element 32n + m, of qs[32 + m]
        // (m < 16) element 160 + 16n + m, of qh[j] (j < 4) element 240 + 4n + j; trit n of byte v
        // is the code of uint8(v · 3^n).
        ch.D = half_at(b + 52);
        const __m256i v32 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b));
        const __m512i a1 = _mm512_maskz_broadcast_i64x4(0xFF, v32);
        const __m512i a3 = times3(a1), a9 = times9(a1), a27 = times9(a3), a81 = times9(a9);
        const __m512i b1 = _mm512_maskz_broadcast_i32x4(0xFFFF, _mm_loadu_si128(reinterpret_cast<const __m128i*>(b + 32)));
        const __m512i b3 = times3(b1), b9 = times9(b1), b27 = times9(b3), b81 = times9(b9);
        const __m128i q1 = _mm_set1_epi32(int(u32_at(b + 48)));
        const __m128i q3 = times3(q1), q9 = times9(q1), q27 = times9(q3);
        const __m128i q = _mm_blend_epi32(_mm_blend_epi32(q1, q3, 0x2), _mm_blend_epi32(q9, q27, 0x8), 0xC);
        ch.c[0] = trit_codes(_mm512_mask_blend_epi64(0xF0, a1, a3));
        ch.c[1] = trit_codes(_mm512_mask_blend_epi64(0xF0, a9, a27));
        ch.c[2] = trit_codes(_mm512_mask_blend_epi64(0xC0, _mm512_mask_blend_epi64(0x30, a81, b1), b3));
        const __m512i c3 = _mm512_mask_blend_epi64(0x30, _mm512_mask_blend_epi64(0x0C, b9, b27), b81);
        ch.c[3] = trit_codes(_mm512_inserti32x4(c3, q, 3));
    }
}

// One row against n <= kTokens tokens, as dot_row_iq_vnni.
template <DType T>
JOURNEY_TQ void dot_row_tq_vnni(float* out, int64_t out_stride, const unsigned char* row, int64_t nb, const QuantizedActivations* xs,
                                int n, bool ask) {
    constexpr size_t kBytes = T == DType::TQ2_0 ? 66 : 54;
    float acc[kTokens];
    for (int t = 0; t < n; ++t) acc[t] = 0.0f;
    for (int64_t k = 0; k < nb; ++k) {
        const unsigned char* b = row + size_t(k) * kBytes;
        if (ask) ask_ahead<kBytes>(b);
        Codes ch;
        decode_tq<T>(b, ch);
        for (int t = 0; t < n; ++t) {
            const int8_t* qx = xs[t].q.data() + 256 * k;
            const __m256i s16 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(xs[t].sum16.data() + 16 * k));
            __m512i isum = _mm512_sub_epi32(_mm512_setzero_si512(), _mm512_maskz_cvtepi16_epi32(0xFFFF, s16));
#pragma GCC unroll 4
            for (int c = 0; c < 4; ++c) isum = _mm512_dpbusd_epi32(isum, ch.c[c], _mm512_loadu_si512(qx + 64 * c));
            acc[t] = step(acc[t], sum16_i32(isum), ch.D, xs[t].d[size_t(k)]);
        }
    }
    for (int t = 0; t < n; ++t) out[t * out_stride] = acc[t];
}

template <DType T>
void dot_rows_tq(float* out, int64_t out_stride, const Matrix& W, const QuantizedActivations* xs, int n_tokens, int64_t r0, int64_t r1) {
    const size_t row_bytes = dtype_bytes(T, uint64_t(W.cols));
    const int64_t nb = W.cols / 256;
    for (int t = 0; t < n_tokens; t += kTokens)
        for (int64_t r = r0; r < r1; ++r)
            dot_row_tq_vnni<T>(out + t * out_stride + r, out_stride, reinterpret_cast<const unsigned char*>(W.data + size_t(r) * row_bytes),
                               nb, xs + t, std::min(kTokens, n_tokens - t), t == 0);
}

// Tokens kTokens at a time (their quants, 16 · 2 KiB for 2048 inputs, stay in L1), each against
// every row r0 .. r1 (the caller's group, read from memory by the first pass only).
template <DType T>
void dot_rows_direct(float* out, int64_t out_stride, const Matrix& W, const QuantizedActivations* xs, int n_tokens, int64_t r0,
                     int64_t r1) {
    const size_t row_bytes = dtype_bytes(T, uint64_t(W.cols));
    const int64_t nb = W.cols / 256;
    for (int t = 0; t < n_tokens; t += kTokens)
        for (int64_t r = r0; r < r1; ++r)
            dot_row_iq_vnni<T>(out + t * out_stride + r, out_stride, reinterpret_cast<const unsigned char*>(W.data + size_t(r) * row_bytes),
                               nb, xs + t, std::min(kTokens, n_tokens - t), t == 0);
}

// false: not one of the direct types (the caller unpacks).
bool dot_rows_direct_any(float* out, int64_t out_stride, const Matrix& W, const QuantizedActivations* xs, int n_tokens,
                         int64_t r0, int64_t r1) {
    switch (W.dtype) {
        case DType::IQ2_XXS: dot_rows_direct<DType::IQ2_XXS>(out, out_stride, W, xs, n_tokens, r0, r1); return true;
        case DType::IQ2_XS: dot_rows_direct<DType::IQ2_XS>(out, out_stride, W, xs, n_tokens, r0, r1); return true;
        case DType::IQ2_S: dot_rows_direct<DType::IQ2_S>(out, out_stride, W, xs, n_tokens, r0, r1); return true;
        case DType::IQ3_XXS: dot_rows_direct<DType::IQ3_XXS>(out, out_stride, W, xs, n_tokens, r0, r1); return true;
        case DType::IQ3_S: dot_rows_direct<DType::IQ3_S>(out, out_stride, W, xs, n_tokens, r0, r1); return true;
        default: return false;
    }
}

// The ternary types need only AVX-512 VNNI (the fast path's own test).
bool dot_rows_tq_any(float* out, int64_t out_stride, const Matrix& W, const QuantizedActivations* xs, int n_tokens, int64_t r0,
                     int64_t r1) {
    switch (W.dtype) {
        case DType::TQ2_0: dot_rows_tq<DType::TQ2_0>(out, out_stride, W, xs, n_tokens, r0, r1); return true;
        case DType::TQ1_0: dot_rows_tq<DType::TQ1_0>(out, out_stride, W, xs, n_tokens, r0, r1); return true;
        default: return false;
    }
}

// What the direct kernels use beyond quant_dot_fast_available()'s AVX-512 VNNI (Zen 4/5, Ice Lake on).
bool cpu_iq_direct() {
    static const bool ok = __builtin_cpu_supports("avx512vbmi") && __builtin_cpu_supports("avx512bitalg");
    return ok;
}

// ---- AVX2 kernels (AVX2, FMA, F16C: CPUs without AVX-512 VNNI) ------------------------------
// As ggml's AVX2 ggml_vec_dot_iq*_q8_K / tq*_q8_K, on the same integer sums as isum_portable and
// the same step(): the same bits. Each sub-block of 32 (ib: elements 32ib .. 32ib + 31) is decoded
// into three vectors just before its products (the scales and D once per super-block, Head): the
// weights' magnitudes |q| as unsigned bytes (the grid rows set by index, _mm256_set_epi64x), a
// vector carrying q's signs, and the int16 scale S of each pair (per 32, or per 16: the low 16
// bytes the sub-block's first half). Then per token: vpsignb moves q's sign onto x's quants (Q8_K: -127..127, so the negation is exact),
// vpmaddubsw sums the pairs |q|·(±qx) into int16 (|.| <= 2 · 62 · 127 = 15748: IQ3's largest
// magnitude 62, IQ2's 43, IQ1's 9; no saturation), vpmaddwd multiplies each pair by its S (<= 31)
// into 8 int32 lanes (|isum| < 2^26: no overflow). The ternary types take codes c = q + 1 in
// {0, 1, 2} against x as they are (int16 pair sums <= 2 · 2 · 127, 8 vectors of them and x's
// Σ of 16 quants (sum16) within int16), Σ q·qx = Σ c·qx - Σ qx; IQ1_S takes its grid's -1, 0, 1
// with 8S and adds its shift as delta · S · x's Σ of 32 quants (sum32). Integer sums are exact in any
// grouping, so isum is isum_portable's, and the float step is step(). One row decodes each
// super-block once for N tokens (8, 4, 2, 1: the N int32 accumulators and a sub-block's three
// vectors fit AVX2's 16 registers). IQ2_XXS and IQ3_S have their own row functions (their sign
// indices and grid indices taken apart a super-block at a time in vectors), which make a
// super-block's step with cvtdq2ps and vfmadd231ss in the vector unit: the same two roundings.
// (7 Dec, one core, rows in cache, journey's old and new kernels and ggml_vec_dot taking turns
// in one process: IQ2_XXS one token 33.3 -> 24.7 ns a super-block, ggml 31.5; IQ3_S 55.5 -> 37.3,
// ggml 44.6. Gathers (vpgatherdd, vpgatherdq) ran at half the speed of scalar loads and inserts
// on Zen 3, and every way of putting 4 or 8 rows into a vector tried — vmovq/vpinsrq, vpbroadcast
// and vpblendd, pairs made by the scalar units — came within 5% of the others.)

// ggml's keven_signs_q2xs: a 7-bit sign index i (iq_signs) as 8 bytes of ±1, for vpsignb.
struct SignBytes {
    uint64_t v[128];
    constexpr SignBytes() : v() {
        for (uint32_t i = 0; i < 128; ++i)
            for (int j = 0; j < 8; ++j) v[i] |= uint64_t((iq_signs(i) >> j) & 1 ? 0xff : 0x01) << (8 * j);
    }
};
constexpr SignBytes kSignBytes;

// Sub-block ib of a super-block (elements 32ib .. 32ib + 31), decoded.
struct Sub {
    __m256i g;   // magnitudes |q|, unsigned bytes
    __m256i s;   // bytes with q's signs (vpsignb's operand; 0 only where |q| is 0)
    __m256i sc;  // S of each int16 pair
};

// What the sub-blocks of a super-block share: D, and the scales as int32 lanes S · 0x10001 (S in
// both int16 halves), decoded together: per 16 (IQ2_XS, IQ2_S, IQ1_M) the scale of j = 2ib + half
// in lane j of A (j < 8) or j - 8 of B; per 32 sub-block ib's in lane ib of A. (IQ2_XXS and
// IQ3_S have kernels of their own: dot_row_iq2xxs_avx2, dot_row_iq3s_avx2.)
struct Head {
    float D;
    __m256i A, B;
    __m128i C;  // IQ1_S: delta · S of sub-block ib in int16 lane ib
};

// S = 2u + 1 in both int16 halves of each int32 lane u (u < 16).
JOURNEY_AVX2 inline __m256i scale_pairs(__m256i u) {
    const __m256i S = _mm256_or_si256(_mm256_add_epi32(u, u), _mm256_set1_epi32(1));
    return _mm256_or_si256(S, _mm256_slli_epi32(S, 16));
}

// Lane i of v in every lane.
JOURNEY_AVX2 inline __m256i lane_of(__m256i v, int i) { return _mm256_permutevar8x32_epi32(v, _mm256_set1_epi32(i)); }

JOURNEY_AVX2 inline float half_avx2(const unsigned char* p) { return _cvtsh_ss(u16_at(p)); }  // fp16_to_fp32, exactly

// vpshufb of v by a 32-byte table.
JOURNEY_AVX2 inline __m256i pick(__m256i v, const uint8_t* table) {
    return _mm256_shuffle_epi8(v, _mm256_load_si256(reinterpret_cast<const __m256i*>(table)));
}

// Four 8-byte grid rows, element 8l + j from byte j of row l.
JOURNEY_AVX2 inline __m256i rows4(const uint64_t* grid, uint32_t i0, uint32_t i1, uint32_t i2, uint32_t i3) {
    return _mm256_set_epi64x(int64_t(grid[i3]), int64_t(grid[i2]), int64_t(grid[i1]), int64_t(grid[i0]));
}

// Eight 4-byte grid rows (IQ3), element 4k + j from byte j of row k, paired into qwords by the
// scalar units (vpinsrd would take twice the vector instructions).
inline int64_t grid_pair(const uint32_t* grid, uint32_t a, uint32_t b) { return int64_t(grid[a] | uint64_t(grid[b]) << 32); }
JOURNEY_AVX2 inline __m256i rows8(const uint32_t* grid, uint32_t i0, uint32_t i1, uint32_t i2, uint32_t i3, uint32_t i4, uint32_t i5,
                                  uint32_t i6, uint32_t i7) {
    return _mm256_set_epi64x(grid_pair(grid, i6, i7), grid_pair(grid, i4, i5), grid_pair(grid, i2, i3), grid_pair(grid, i0, i1));
}

// The signs of 4 groups of 8 from 7-bit indices in bits 0, 7, 14, 21 of v.
JOURNEY_AVX2 inline __m256i signs7(uint32_t v) {
    return rows4(kSignBytes.v, v & 127, (v >> 7) & 127, (v >> 14) & 127, (v >> 21) & 127);
}

// The signs of 32 elements from 32 bits (bit j set: element j negative): byte j takes byte j / 8
// of v, keeps bit j % 8, and becomes -1 where it is set, else 1.
JOURNEY_AVX2 inline __m256i signs32(uint32_t v) {
    const __m256i spread = _mm256_setr_epi8(0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1,
                                            2, 2, 2, 2, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 3, 3);
    const __m256i bit = _mm256_set1_epi64x(int64_t(0x8040201008040201ull));
    const __m256i m = _mm256_and_si256(_mm256_shuffle_epi8(_mm256_set1_epi32(int(v)), spread), bit);
    return _mm256_or_si256(_mm256_cmpeq_epi8(m, bit), _mm256_set1_epi8(1));
}

// IQ1_M's q = 8 · grid + delta, delta = ±1 per group l of 8 (-1 where bit 4l + 3 of qh is set:
// byte j of a vector takes byte j / 16 of qh, keeps bit 3 or 7), from signed grid rows g (-1, 0,
// 1): |q| <= 9, odd.
JOURNEY_AVX2 inline void iq1m_q(Sub& u, __m256i g, uint32_t qh) {
    const __m256i spread = _mm256_setr_epi8(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1);
    const int64_t b3 = 0x0808080808080808ll, b7 = int64_t(0x8080808080808080ull);
    const __m256i bit = _mm256_set_epi64x(b7, b3, b7, b3);
    const __m256i m = _mm256_and_si256(_mm256_shuffle_epi8(_mm256_set1_epi16(int16_t(qh)), spread), bit);
    const __m256i delta = _mm256_or_si256(_mm256_cmpeq_epi8(m, bit), _mm256_set1_epi8(1));
    const __m256i q = _mm256_add_epi8(_mm256_and_si256(_mm256_slli_epi16(g, 3), _mm256_set1_epi8(char(0xf8))), delta);
    u.g = _mm256_abs_epi8(q);
    u.s = q;
}

// Head's A and B from the values u_j of the scales per 16 (S = 2u + 1), as int32.
JOURNEY_AVX2 inline void scales16(Head& h, __m256i A, __m256i B) {
    h.A = scale_pairs(A);
    h.B = scale_pairs(B);
}

// The same from 8 bytes of two nibbles (low: the first 16 of sub-block ib, high: the second).
JOURNEY_AVX2 inline void scales16_nibbles(Head& h, const unsigned char* p) {
    uint64_t v;
    std::memcpy(&v, p, 8);
    const __m128i u = _mm_unpacklo_epi8(_mm_cvtsi64_si128(int64_t(v & 0x0f0f0f0f0f0f0f0full)),
                                        _mm_cvtsi64_si128(int64_t((v >> 4) & 0x0f0f0f0f0f0f0f0full)));  // u_j
    scales16(h, _mm256_cvtepu8_epi32(u), _mm256_cvtepu8_epi32(_mm_srli_si128(u, 8)));
}

// Sub-block ib's scales per 16: vpermd puts S_2ib in the low 16 bytes, S_2ib+1 in the high.
JOURNEY_AVX2 inline __m256i scale16_of(const Head& h, int ib) {
    const int j = 2 * (ib % 4);
    return _mm256_permutevar8x32_epi32(ib < 4 ? h.A : h.B, _mm256_setr_epi32(j, j, j, j, j + 1, j + 1, j + 1, j + 1));
}

template <DType T>
JOURNEY_AVX2 inline Head head_avx2(const unsigned char* b) {
    Head h;
    h.A = h.B = _mm256_setzero_si256();
    h.C = _mm_setzero_si128();
    if constexpr (T == DType::IQ1_M) {
        uint64_t sc;  // 4 words: scale fields of 3 bits (j at bit 16 (j / 4) + 3 (j % 4)), the f16 d in the top nibbles
        std::memcpy(&sc, b + 48, 8);
        h.D = _cvtsh_ss(uint16_t(((sc >> 12) & 0x000f) | ((sc >> 24) & 0x00f0) | ((sc >> 36) & 0x0f00) | ((sc >> 48) & 0xf000))) * 0.125f;
        const __m256i shifts = _mm256_setr_epi32(0, 3, 6, 9, 16, 19, 22, 25), seven = _mm256_set1_epi32(7);
        scales16(h, _mm256_and_si256(_mm256_srlv_epi32(_mm256_set1_epi32(int(uint32_t(sc))), shifts), seven),
                 _mm256_and_si256(_mm256_srlv_epi32(_mm256_set1_epi32(int(uint32_t(sc >> 32))), shifts), seven));
    } else {
        h.D = half_avx2(b) * (T == DType::IQ3_S ? 1.0f : T == DType::IQ3_XXS ? 0.25f : 0.125f);
        if constexpr (T == DType::IQ2_XS) scales16_nibbles(h, b + 66);
        if constexpr (T == DType::IQ2_S) scales16_nibbles(h, b + 74);
        if constexpr (T == DType::IQ3_XXS)  // u in bits 28-31 of dword ib from b + 66
            h.A = scale_pairs(_mm256_srli_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(b + 66)), 28));
        if constexpr (T == DType::IQ1_S) {
            // word ib from b + 34: u in bits 12-14, the shift's sign in bit 15. Σ q·qx = 8 Σ grid·qx +
            // delta · Σ qx over the sub-block (x.sum32): A holds 8S, C delta · S
            const __m128i qh = _mm_loadu_si128(reinterpret_cast<const __m128i*>(b + 34));
            const __m128i u = _mm_and_si128(_mm_srli_epi16(qh, 12), _mm_set1_epi16(7));
            h.A = _mm256_slli_epi32(scale_pairs(_mm256_cvtepu16_epi32(u)), 3);
            const __m128i S = _mm_or_si128(_mm_add_epi16(u, u), _mm_set1_epi16(1));
            h.C = _mm_sign_epi16(S, _mm_or_si128(_mm_srai_epi16(qh, 15), _mm_set1_epi16(1)));
        }
    }
    return h;
}

// The layouts are unpack()'s.
template <DType T>
JOURNEY_AVX2 inline Sub sub_avx2(const unsigned char* b, const Head& h, int ib) {
    Sub u;
    if constexpr (T == DType::IQ2_XS) {
        uint64_t v;  // 4 entries of 16 bits: the grid index in bits 0-8, the sign index in 9-15
        std::memcpy(&v, b + 2 + 8 * ib, 8);
        u.g = rows4(kIq2xsGrid, v & 511, (v >> 16) & 511, (v >> 32) & 511, (v >> 48) & 511);
        u.s = rows4(kSignBytes.v, (v >> 9) & 127, (v >> 25) & 127, (v >> 41) & 127, (v >> 57) & 127);
        u.sc = scale16_of(h, ib);
    } else if constexpr (T == DType::IQ2_S) {
        const unsigned char* p = b + 2 + 4 * ib;
        const uint32_t qh = b[66 + ib];
        u.g = rows4(kIq2sGrid, p[0] | ((qh << 8) & 0x300), p[1] | ((qh << 6) & 0x300), p[2] | ((qh << 4) & 0x300), p[3] | ((qh << 2) & 0x300));
        u.s = signs32(u32_at(b + 34 + 4 * ib));
        u.sc = scale16_of(h, ib);
    } else if constexpr (T == DType::IQ3_XXS) {
        const unsigned char* p = b + 2 + 8 * ib;
        const uint32_t aux = u32_at(b + 66 + 4 * ib);
        u.g = rows8(kIq3xxsGrid, p[0], p[1], p[2], p[3], p[4], p[5], p[6], p[7]);
        u.s = signs7(aux);
        u.sc = lane_of(h.A, ib);
    } else if constexpr (T == DType::IQ1_S) {
        const unsigned char* p = b + 2 + 4 * ib;
        const uint32_t qh = u16_at(b + 34 + 2 * ib);  // 3 index bits per group of 8, the scale in bits 12-14, the shift's sign in 15
        const __m256i g = rows4(kIq1sGrid, p[0] | ((qh << 8) & 0x700), p[1] | ((qh << 5) & 0x700), p[2] | ((qh << 2) & 0x700), p[3] | ((qh >> 1) & 0x700));
        u.g = _mm256_abs_epi8(g);  // the grid's -1, 0, 1 (the shift is Head's C)
        u.s = g;
        u.sc = lane_of(h.A, ib);
    } else if constexpr (T == DType::IQ1_M) {
        const unsigned char* p = b + 4 * ib;
        const uint32_t qh = u16_at(b + 32 + 2 * ib);  // per group l of 8, bits 4l ..: 3 index bits, then the shift's sign
        iq1m_q(u, rows4(kIq1sGrid, p[0] | ((qh << 8) & 0x700), p[1] | ((qh << 4) & 0x700), p[2] | (qh & 0x700), p[3] | ((qh >> 4) & 0x700)), qh);
        u.sc = scale16_of(h, ib);
    }
    return u;
}

// The ternary codes c = q + 1 of a super-block, 8 vectors of 32 in unpack()'s order.
struct Codes8 {
    __m256i c[8];
    float D;
};

// Bytes times 3 and times 9, modulo 256 (no 8-bit multiply).
JOURNEY_AVX2 inline __m256i times3_avx2(__m256i v) { return _mm256_add_epi8(v, _mm256_add_epi8(v, v)); }
JOURNEY_AVX2 inline __m256i times9_avx2(__m256i v) {
    return _mm256_add_epi8(_mm256_and_si256(_mm256_slli_epi16(v, 3), _mm256_set1_epi8(char(0xf8))), v);
}

// The trit code (3t) >> 8 of each byte t: 1 from t = 86, 2 from t = 171 (signed compares on t - 128).
JOURNEY_AVX2 inline __m256i trit_codes_avx2(__m256i t) {
    const __m256i s = _mm256_xor_si256(t, _mm256_set1_epi8(char(0x80)));
    const __m256i ge = _mm256_add_epi8(_mm256_cmpgt_epi8(s, _mm256_set1_epi8(85 - 128)), _mm256_cmpgt_epi8(s, _mm256_set1_epi8(170 - 128)));
    return _mm256_sub_epi8(_mm256_setzero_si256(), ge);
}

template <DType T>
JOURNEY_AVX2 __attribute__((always_inline)) inline void decode_tq_avx2(const unsigned char* b, Codes8& ch) {
    if constexpr (T == DType::TQ2_0) {
        // vector 4h + l: bits 2l of qs[32h .. 32h + 31]
        ch.D = half_avx2(b + 64);
        for (int h = 0; h < 2; ++h) {
            const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b + 32 * h));
            for (int l = 0; l < 4; ++l) ch.c[4 * h + l] = _mm256_and_si256(_mm256_srli_epi16(v, 2 * l), _mm256_set1_epi8(3));
        }
    } else {
        // TQ1_0 (decode_tq's order): vector n < 5 is trit n of qs[0 .. 31]; then trits 0-1, 2-3 and
        // 4 of qs[32 .. 47] by halves, and the last 16 bytes trit 4j + n of qh[j]
        ch.D = half_avx2(b + 52);
        const __m256i a1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b));
        const __m256i a3 = times3_avx2(a1), a9 = times9_avx2(a1);
        ch.c[0] = trit_codes_avx2(a1);
        ch.c[1] = trit_codes_avx2(a3);
        ch.c[2] = trit_codes_avx2(a9);
        ch.c[3] = trit_codes_avx2(times9_avx2(a3));
        ch.c[4] = trit_codes_avx2(times9_avx2(a9));
        const __m256i b1 = _mm256_broadcastsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(b + 32)));
        const __m256i b3 = times3_avx2(b1), b9 = times9_avx2(b1);
        const __m256i q1 = _mm256_set1_epi32(int(u32_at(b + 48))), q3 = times3_avx2(q1), q9 = times9_avx2(q1);
        // dword n of each 16-byte half: qh · 3^n
        const __m256i q = _mm256_blend_epi32(_mm256_blend_epi32(q1, q3, 0x22), _mm256_blend_epi32(q9, times9_avx2(q3), 0x88), 0xCC);
        ch.c[5] = trit_codes_avx2(_mm256_blend_epi32(b1, b3, 0xF0));
        ch.c[6] = trit_codes_avx2(_mm256_blend_epi32(b9, times9_avx2(b3), 0xF0));
        ch.c[7] = trit_codes_avx2(_mm256_blend_epi32(times9_avx2(b9), q, 0xF0));
    }
}

// The exact int32 sum of 8 lanes.
JOURNEY_AVX2 inline int32_t sum8_i32_avx2(__m256i v) {
    __m128i q = _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
    q = _mm_add_epi32(q, _mm_shuffle_epi32(q, 0x4e));
    return _mm_cvtsi128_si32(_mm_add_epi32(q, _mm_shuffle_epi32(q, 0xb1)));
}

constexpr bool is_tq(DType t) { return t == DType::TQ1_0 || t == DType::TQ2_0; }

// IQ2_XXS, one row against N tokens. Per super-block, the 32 sign bytes (iq_signs of the 7-bit
// indices: the index and its parity in bit 7) and the 8 scales are computed together in vectors
// (no table of signs); per sub-block one vpshufb spreads its 4 sign bytes over its 32 elements
// and one picks its scale. The grid rows stay loads (rows4).
struct Iq2xxsPicks {
    alignas(32) uint8_t sign[4][32];   // dword pos of a 16-byte lane: byte 4pos + i/8 (both lanes: i/16 picks bytes 2, 3)
    alignas(32) uint8_t scale[4][32];  // byte 4pos into every int16 (high byte zero)
    alignas(16) uint8_t parity[16];    // parity of a nibble, in bit 7
    constexpr Iq2xxsPicks() : sign(), scale(), parity() {
        for (int pos = 0; pos < 4; ++pos)
            for (int i = 0; i < 32; ++i) {
                sign[pos][i] = uint8_t(4 * pos + 2 * (i / 16) + (i % 16) / 8);
                scale[pos][i] = i % 2 == 0 ? uint8_t(4 * pos) : uint8_t(0x80);
            }
        for (int n = 0; n < 16; ++n) parity[n] = uint8_t((((n >> 0) ^ (n >> 1) ^ (n >> 2) ^ (n >> 3)) & 1) << 7);
    }
};
constexpr Iq2xxsPicks kIq2xxsPicks;

// step() for N tokens, in the vector unit: each token's exact int32 sum of its 8 lanes, then
// float(isum) and one fma into acc[t] (the same two roundings as the portable step).
template <int N>
JOURNEY_AVX2 inline void step_tokens_avx2(__m128* acc, const __m256i* isum, float D, const QuantizedActivations* xs, int64_t k) {
    for (int t = 0; t < N; ++t) {
        __m128i q = _mm_add_epi32(_mm256_castsi256_si128(isum[t]), _mm256_extracti128_si256(isum[t], 1));
        q = _mm_add_epi32(q, _mm_shuffle_epi32(q, 0x4e));
        q = _mm_add_epi32(q, _mm_shuffle_epi32(q, 0xb1));
        acc[t] = _mm_fmadd_ss(_mm_cvtepi32_ps(q), _mm_set_ss(D * xs[t].d[size_t(k)]), acc[t]);
    }
}

template <int N>
JOURNEY_AVX2 void dot_row_iq2xxs_avx2(float* out, int64_t out_stride, const unsigned char* row, int64_t nb, const QuantizedActivations* xs,
                                      bool ask) {
    constexpr size_t kBytes = 66;
    __m128 acc[N];
    for (int t = 0; t < N; ++t) acc[t] = _mm_setzero_ps();
    const __m256i m7 = _mm256_set1_epi32(0x7f), nib = _mm256_set1_epi8(0x0f), one8 = _mm256_set1_epi8(1);
    const __m256i bits = _mm256_set1_epi64x(int64_t(0x8040201008040201ull));
    const __m256i par = _mm256_broadcastsi128_si256(_mm_load_si128(reinterpret_cast<const __m128i*>(kIq2xxsPicks.parity)));
    for (int64_t k = 0; k < nb; ++k) {
        const unsigned char* b = row + size_t(k) * kBytes;
        if (ask) ask_ahead<kBytes>(b);
        // aux of sub-block ib (the odd dwords from b + 2) in dword 2 (ib % 4) + ib / 4: lanes [0 4 1 5], [2 6 3 7]
        const __m256i A = _mm256_blend_epi32(_mm256_srli_epi64(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(b + 2)), 32),
                                             _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b + 34)), 0xAA);
        __m256i f = _mm256_or_si256(_mm256_or_si256(_mm256_and_si256(A, m7), _mm256_and_si256(_mm256_slli_epi32(A, 1), _mm256_slli_epi32(m7, 8))),
                                    _mm256_or_si256(_mm256_and_si256(_mm256_slli_epi32(A, 2), _mm256_slli_epi32(m7, 16)),
                                                    _mm256_and_si256(_mm256_slli_epi32(A, 3), _mm256_slli_epi32(m7, 24))));
        f = _mm256_or_si256(f, _mm256_xor_si256(_mm256_shuffle_epi8(par, _mm256_and_si256(f, nib)),
                                                _mm256_shuffle_epi8(par, _mm256_and_si256(_mm256_srli_epi16(f, 4), nib))));
        const __m256i u = _mm256_srli_epi32(A, 28);
        const __m256i S = _mm256_or_si256(_mm256_add_epi32(u, u), _mm256_set1_epi32(1));
        const __m256i sgn[2] = {_mm256_permute4x64_epi64(f, 0x44), _mm256_permute4x64_epi64(f, 0xEE)};
        const __m256i scl[2] = {_mm256_permute4x64_epi64(S, 0x44), _mm256_permute4x64_epi64(S, 0xEE)};
        __m256i isum[N];
#pragma GCC unroll 8
        for (int t = 0; t < N; ++t) isum[t] = _mm256_setzero_si256();
#pragma GCC unroll 8
        for (int ib = 0; ib < 8; ++ib) {
            const int lane = (ib / 2) % 2, pos = 2 * (ib % 2) + ib / 4;
            const unsigned char* gp = b + 2 + 8 * ib;  // grid rows 0, 1 in the low half, 2, 3 in the high (vmovq, vmovhps)
            const auto row2 = [&](int l) {
                const __m128i a = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(kIq2xxsGrid + gp[l]));
                return _mm_castpd_si128(_mm_loadh_pd(_mm_castsi128_pd(a), reinterpret_cast<const double*>(kIq2xxsGrid + gp[l + 1])));
            };
            const __m256i g = _mm256_inserti128_si256(_mm256_castsi128_si256(row2(0)), row2(2), 1);
            const __m256i sp = _mm256_and_si256(pick(sgn[lane], kIq2xxsPicks.sign[pos]), bits);
            const __m256i s = _mm256_or_si256(_mm256_cmpeq_epi8(sp, bits), one8);
            const __m256i sc = pick(scl[lane], kIq2xxsPicks.scale[pos]);
#pragma GCC unroll 8
            for (int t = 0; t < N; ++t) {
                const __m256i x = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(xs[t].q.data() + 256 * k + 32 * ib));
                isum[t] = _mm256_add_epi32(isum[t], _mm256_madd_epi16(_mm256_maddubs_epi16(g, _mm256_sign_epi8(x, s)), sc));
            }
        }
        const float D = half_avx2(b) * 0.125f;
        step_tokens_avx2<N>(acc, isum, D, xs, k);
    }
    for (int t = 0; t < N; ++t) out[t * out_stride] = _mm_cvtss_f32(acc[t]);
}

// IQ3_S, one row against N tokens. The 9-bit grid indices of a super-block (qs | bit k of qh << 8)
// are made 16 at a time in vectors (the high bit by a compare against 1 << k) and stored, then
// read back one by one by the scalar units to address the grid: no shifts and masks per index.
// The grid rows go in by vmovd/vpinsrd/vinserti128 (GCC's form of rows8's qword pairs took more
// shuffles).
template <int N>
JOURNEY_AVX2 void dot_row_iq3s_avx2(float* out, int64_t out_stride, const unsigned char* row, int64_t nb, const QuantizedActivations* xs,
                                    bool ask) {
    constexpr size_t kBytes = 110;
    __m128 acc[N];
    for (int t = 0; t < N; ++t) acc[t] = _mm_setzero_ps();
    const __m256i bit16 = _mm256_setr_epi16(1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384, -32768);
    const __m256i high = _mm256_set1_epi16(256);
    alignas(32) uint16_t idx[64];
    for (int64_t k = 0; k < nb; ++k) {
        const unsigned char* b = row + size_t(k) * kBytes;
        if (ask) ask_ahead<kBytes>(b);
        for (int j = 0; j < 4; ++j) {  // sub-blocks 2j, 2j + 1: index 16j + i takes bit i of qh[2j] | qh[2j + 1] << 8
            const __m256i lo = _mm256_cvtepu8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(b + 2 + 16 * j)));
            const __m256i h = _mm256_and_si256(_mm256_set1_epi16(short(u16_at(b + 66 + 2 * j))), bit16);
            _mm256_store_si256(reinterpret_cast<__m256i*>(idx + 16 * j), _mm256_or_si256(lo, _mm256_and_si256(_mm256_cmpeq_epi16(h, bit16), high)));
        }
        const __m256i A = scale_pairs(_mm256_and_si256(_mm256_srlv_epi32(_mm256_set1_epi32(int(u32_at(b + 106))), _mm256_setr_epi32(0, 4, 8, 12, 16, 20, 24, 28)),
                                                       _mm256_set1_epi32(15)));
        __m256i isum[N];
#pragma GCC unroll 8
        for (int t = 0; t < N; ++t) isum[t] = _mm256_setzero_si256();
#pragma GCC unroll 8
        for (int ib = 0; ib < 8; ++ib) {
            const uint16_t* i8 = idx + 8 * ib;
            const __m128i lo = _mm_insert_epi32(_mm_insert_epi32(_mm_insert_epi32(_mm_cvtsi32_si128(int(kIq3sGrid[i8[0]])), int(kIq3sGrid[i8[1]]), 1),
                                                                int(kIq3sGrid[i8[2]]), 2), int(kIq3sGrid[i8[3]]), 3);
            const __m128i hi = _mm_insert_epi32(_mm_insert_epi32(_mm_insert_epi32(_mm_cvtsi32_si128(int(kIq3sGrid[i8[4]])), int(kIq3sGrid[i8[5]]), 1),
                                                                int(kIq3sGrid[i8[6]]), 2), int(kIq3sGrid[i8[7]]), 3);
            const __m256i g = _mm256_inserti128_si256(_mm256_castsi128_si256(lo), hi, 1);
            const __m256i s = signs32(u32_at(b + 74 + 4 * ib));
            const __m256i sc = lane_of(A, ib);
#pragma GCC unroll 8
            for (int t = 0; t < N; ++t) {
                const __m256i x = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(xs[t].q.data() + 256 * k + 32 * ib));
                isum[t] = _mm256_add_epi32(isum[t], _mm256_madd_epi16(_mm256_maddubs_epi16(g, _mm256_sign_epi8(x, s)), sc));
            }
        }
        const float D = half_avx2(b);
        step_tokens_avx2<N>(acc, isum, D, xs, k);
    }
    for (int t = 0; t < N; ++t) out[t * out_stride] = _mm_cvtss_f32(acc[t]);
}

// One row against tokens xs[0 .. N-1]: out[t · out_stride] has the bits of isum_portable and step().
template <DType T, int N>
JOURNEY_AVX2 void dot_row_iq_avx2(float* out, int64_t out_stride, const unsigned char* row, int64_t nb,
                                  const QuantizedActivations* xs, bool ask) {
    constexpr size_t kBytes = T == DType::IQ2_XXS ? 66 : T == DType::IQ2_XS ? 74 : T == DType::IQ2_S ? 82 : T == DType::IQ3_XXS ? 98
                            : T == DType::IQ3_S ? 110 : T == DType::IQ1_S ? 50 : T == DType::IQ1_M ? 56 : T == DType::TQ1_0 ? 54 : 66;
    float acc[N];
    for (int t = 0; t < N; ++t) acc[t] = 0.0f;
    for (int64_t k = 0; k < nb; ++k) {
        const unsigned char* b = row + size_t(k) * kBytes;
        if (ask) ask_ahead<kBytes>(b);
        __m256i isum[N];
        float D;
        if constexpr (is_tq(T)) {
            Codes8 ch;
            decode_tq_avx2<T>(b, ch);
            D = ch.D;
            for (int t = 0; t < N; ++t) {
                const int8_t* qx = xs[t].q.data() + 256 * k;
                __m256i s16 = _mm256_sub_epi16(_mm256_setzero_si256(), _mm256_loadu_si256(reinterpret_cast<const __m256i*>(xs[t].sum16.data() + 16 * k)));
#pragma GCC unroll 8
                for (int v = 0; v < 8; ++v)
                    s16 = _mm256_add_epi16(s16, _mm256_maddubs_epi16(ch.c[v], _mm256_loadu_si256(reinterpret_cast<const __m256i*>(qx + 32 * v))));
                isum[t] = _mm256_madd_epi16(s16, _mm256_set1_epi16(1));
            }
        } else {
            const Head h = head_avx2<T>(b);
            D = h.D;
#pragma GCC unroll 8
            for (int t = 0; t < N; ++t) {  // (unrolled: else GCC zeroes isum by a call to memset)
                if constexpr (T == DType::IQ1_S)  // Σ_ib delta · S · Σ32 qx (|.| <= 8 · 15 · 4064)
                    isum[t] = _mm256_zextsi128_si256(_mm_madd_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(xs[t].sum32.data() + 8 * k)), h.C));
                else
                    isum[t] = _mm256_setzero_si256();
            }
#pragma GCC unroll 8
            for (int ib = 0; ib < 8; ++ib) {
                const Sub u = sub_avx2<T>(b, h, ib);
                for (int t = 0; t < N; ++t) {
                    const __m256i x = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(xs[t].q.data() + 256 * k + 32 * ib));
                    const __m256i p = _mm256_maddubs_epi16(u.g, _mm256_sign_epi8(x, u.s));
                    isum[t] = _mm256_add_epi32(isum[t], _mm256_madd_epi16(p, u.sc));
                }
            }
        }
        for (int t = 0; t < N; ++t) acc[t] = step(acc[t], sum8_i32_avx2(isum[t]), D, xs[t].d[size_t(k)]);
    }
    for (int t = 0; t < N; ++t) out[t * out_stride] = acc[t];
}

// IQ2_XXS's and IQ3_S's own row functions, the others' shared one.
template <DType T, int N>
JOURNEY_AVX2 void row_iq_avx2(float* out, int64_t out_stride, const unsigned char* row, int64_t nb, const QuantizedActivations* xs, bool ask) {
    if constexpr (T == DType::IQ2_XXS)
        dot_row_iq2xxs_avx2<N>(out, out_stride, row, nb, xs, ask);
    else if constexpr (T == DType::IQ3_S)
        dot_row_iq3s_avx2<N>(out, out_stride, row, nb, xs, ask);
    else
        dot_row_iq_avx2<T, N>(out, out_stride, row, nb, xs, ask);
}

// Rows r0 .. r1 against T tokens: groups of rows of about 32 KiB (from cache after the first
// token group, which alone asks ahead), each taken by 8 tokens at a time, then 4, 2, 1. One token:
// one row after another.
constexpr size_t kAvx2GroupBytes = 32768;

template <DType T>
void dot_rows_iq_avx2(float* out, int64_t out_stride, const Matrix& W, const QuantizedActivations* xs, int n_tokens, int64_t r0,
                      int64_t r1) {
    const size_t row_bytes = dtype_bytes(T, uint64_t(W.cols));
    const int64_t nb = W.cols / 256;
    const int64_t group = std::max<int64_t>(1, int64_t(kAvx2GroupBytes / row_bytes));
    const auto row = [&](int64_t r) { return reinterpret_cast<const unsigned char*>(W.data + size_t(r) * row_bytes); };
    for (int64_t g = r0; g < r1; g += group) {
        const int64_t g1 = std::min(r1, g + group);
        int t = 0;
        for (; t + 8 <= n_tokens; t += 8)
            for (int64_t r = g; r < g1; ++r) row_iq_avx2<T, 8>(out + t * out_stride + r, out_stride, row(r), nb, xs + t, t == 0);
        for (; t + 4 <= n_tokens; t += 4)
            for (int64_t r = g; r < g1; ++r) row_iq_avx2<T, 4>(out + t * out_stride + r, out_stride, row(r), nb, xs + t, t == 0);
        for (; t + 2 <= n_tokens; t += 2)
            for (int64_t r = g; r < g1; ++r) row_iq_avx2<T, 2>(out + t * out_stride + r, out_stride, row(r), nb, xs + t, t == 0);
        for (; t < n_tokens; ++t)
            for (int64_t r = g; r < g1; ++r) row_iq_avx2<T, 1>(out + t * out_stride + r, out_stride, row(r), nb, xs + t, t == 0);
    }
}

bool dot_rows_iq_avx2_any(float* out, int64_t out_stride, const Matrix& W, const QuantizedActivations* xs, int n_tokens, int64_t r0,
                          int64_t r1) {
    switch (W.dtype) {
        case DType::IQ2_XXS: dot_rows_iq_avx2<DType::IQ2_XXS>(out, out_stride, W, xs, n_tokens, r0, r1); return true;
        case DType::IQ2_XS: dot_rows_iq_avx2<DType::IQ2_XS>(out, out_stride, W, xs, n_tokens, r0, r1); return true;
        case DType::IQ2_S: dot_rows_iq_avx2<DType::IQ2_S>(out, out_stride, W, xs, n_tokens, r0, r1); return true;
        case DType::IQ3_XXS: dot_rows_iq_avx2<DType::IQ3_XXS>(out, out_stride, W, xs, n_tokens, r0, r1); return true;
        case DType::IQ3_S: dot_rows_iq_avx2<DType::IQ3_S>(out, out_stride, W, xs, n_tokens, r0, r1); return true;
        case DType::IQ1_S: dot_rows_iq_avx2<DType::IQ1_S>(out, out_stride, W, xs, n_tokens, r0, r1); return true;
        case DType::IQ1_M: dot_rows_iq_avx2<DType::IQ1_M>(out, out_stride, W, xs, n_tokens, r0, r1); return true;
        case DType::TQ1_0: dot_rows_iq_avx2<DType::TQ1_0>(out, out_stride, W, xs, n_tokens, r0, r1); return true;
        case DType::TQ2_0: dot_rows_iq_avx2<DType::TQ2_0>(out, out_stride, W, xs, n_tokens, r0, r1); return true;
        default: return false;
    }
}

}  // namespace

bool has_iq_dot(DType t) {
    switch (t) {
        case DType::IQ2_XXS: case DType::IQ2_XS: case DType::IQ2_S: case DType::IQ3_XXS: case DType::IQ3_S:
        case DType::IQ1_S: case DType::IQ1_M: case DType::TQ1_0: case DType::TQ2_0: return true;
        default: return false;
    }
}

bool has_iq_direct_dot(DType t) {
    return t == DType::IQ2_XXS || t == DType::IQ2_XS || t == DType::IQ2_S || t == DType::IQ3_XXS || t == DType::IQ3_S;
}

void dot_rows_iq(float* out, const Matrix& W, const QuantizedActivations& x, int64_t r0, int64_t r1, DotPath path) {
    if (path == DotPath::avx2 && dot_rows_iq_avx2_any(out, 0, W, &x, 1, r0, r1)) return;
    const bool fast = path == DotPath::vnni;
    if (fast && (dot_rows_tq_any(out, 0, W, &x, 1, r0, r1) || (cpu_iq_direct() && dot_rows_direct_any(out, 0, W, &x, 1, r0, r1)))) return;
    const size_t block_bytes = dtype_bytes(W.dtype, 256), row_bytes = dtype_bytes(W.dtype, uint64_t(W.cols));
    const int64_t nb = W.cols / 256;
    SuperBlock u;
    for (int64_t r = r0; r < r1; ++r) {
        const auto* row = reinterpret_cast<const unsigned char*>(W.data + size_t(r) * row_bytes);
        float acc = 0.0f;
        for (int64_t k = 0; k < nb; ++k) {
            unpack(W.dtype, row + size_t(k) * block_bytes, u);
            const int8_t* qx = x.q.data() + 256 * k;
            acc = step(acc, fast ? isum_vnni(u, qx) : isum_portable(u, qx), u.D, x.d[size_t(k)]);
        }
        out[r] = acc;
    }
}

void dot_rows_iq_tokens(float* out, int64_t out_stride, const Matrix& W, const QuantizedActivations* xs, int T, int64_t r0,
                        int64_t r1, bool fast) {
    if (!fast && quant_dot_avx2_available() && dot_rows_iq_avx2_any(out, out_stride, W, xs, T, r0, r1)) return;  // dot.cpp's AVX2 path
    if (fast && (dot_rows_tq_any(out, out_stride, W, xs, T, r0, r1) || (cpu_iq_direct() && dot_rows_direct_any(out, out_stride, W, xs, T, r0, r1))))
        return;
    for (int t = 0; t < T; ++t) dot_rows_iq(out + t * out_stride, W, xs[t], r0, r1, fast ? DotPath::vnni : DotPath::portable);
}

}  // namespace journey
