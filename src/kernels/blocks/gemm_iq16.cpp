// Prompts of IQ2_XXS, IQ2_XS, IQ2_S, IQ3_XXS, IQ3_S, IQ4_XS, IQ1_S, IQ1_M, TQ1_0 and TQ2_0: x at
// 16 bits against the weights' own integers, AVX-512 VNNI vpdpwssd (32 products an instruction, twice
// the float fma's 16), the sums exact (header: blocks/gemm_iq16.h).
//
// Weights. Each super-block of 256 is d_w · w_i exactly, w_i an integer (dequantize.cpp's
// expressions, every product there exact in float):
//   IQ2_XXS / IQ2_XS / IQ2_S: d (0.5 + u) 0.25 · grid · sign = d/8 · (2u + 1) grid sign,
//       |w| <= 31 · 43 = 1333;
//   IQ3_XXS: d (0.5 + u) 0.5 · grid · sign = d/4 · (2u + 1) grid sign, |w| <= 31 · 62 = 1922;
//   IQ3_S: d (1 + 2s) · grid · sign, |w| <= 31 · 15 = 465 (its grid's magnitudes are 1 .. 15);
//   IQ4_XS: d (ls - 32) · kIq4Values, |w| <= 32 · 127 = 4064;
//   IQ1_S / IQ1_M: d (2s + 1) (grid ± 1/8) = d/8 · (2s + 1)(8 grid ± 1), |w| <= 15 · 9 = 135;
//   TQ1_0: d · t, t in {-1, 0, 1}, |w| <= 1; TQ2_0: d (q - 1), q a 2-bit code, |w| <= 2 (code 3,
//       which no quantizer writes, decodes to 2 as in ggml).
// All fit int16 with the sub-block scale folded in, so one int32 sum per (row, token,
// super-block) needs no reduction per sub-block. (IQ4_NL has a float d per 32: not here.)
//
// x. Per token and super-block k, q_i = round(x_i / d_x) with
//   d_x = max(amax / 32767, Σ|x| / (0.98 L - 128)),   L = floor((2^31 - 1) / W),
// W the type's largest |w| (iq16_max_weight), q then clamped to ±32767. The int32 bound: the
// first term makes |q_i| <= 32767 (int16); with the second, Σ|q_i| <= Σ|x_i| / d_x (1 + 2^-22)
// + 256 · 0.5 <= (0.98 L - 128)(1 + 1e-4) + 128 < L (Σ|x| is a float sum of 256 terms, off by
// under 256 · 2^-24 relatively; L >= 528,000 for every type; for TQ1_0/TQ2_0 the first term
// decides: Σ|q_i| <= 256 · 32767 < 2^23), so |Σ_i w_i q_i| <= W Σ|q_i| <
// W L <= 2^31 - 1. vpdpwssd adds modulo 2^32; the exact total fits int32, so whatever the
// order and any wrap on the way, the register holds the exact sum. d_x is then at most 1/32767
// of amax (15 bits) and on rare flat super-blocks of IQ4_XS (amax / mean|x| under 16) a little
// more: for a Gaussian x about 13 bits. llama.cpp's Q8_K rounds x to 8 bits.
//
// Output. out[t, r] = Σ_k in order of fma(float(isum_k), d_w[k] · d_x[k], ·) from 0: one
// statement (step) for both kernels; the integer sums are exact: the bits depend on nothing
// else (tiling, threads, T, the kernel).
//
// Tiles. Threads take panels of 64 rows as they come. A panel's super-blocks are decoded 4 at a
// time (1024 inputs: 128 KiB of int16, in L2) into pairs of inputs side by side for 64 rows
// ([pair][row][2]); then every token of the prompt runs over them, 6 tokens x 64 rows at a time
// in 24 zmm accumulators, one vpdpwssd per 16 rows, token and input pair (the pair of x
// broadcast). Each super-block decoded once for the whole prompt. Without VNNI: the same panels
// under an AVX2 tile (vpmaddwd + vpaddd, the same exact sums: tile_avx2; 6 tokens x 16 rows a
// pass in 12 ymm sums, in assembly), else the portable one; the panels of IQ2_XXS, IQ3_S, IQ4_XS
// and TQ2_0 decoded by AVX2 decoders there (the same integers).
//
// AVX2 host (AMD EPYC Zen 3, 2 vCPUs), Llama 3.2 1B shape pp512 -t 2 (journey bench -p 512 -n 0
// -t 2 -r 2, before/after alternating, 7 Dec 21:35-22:05 UTC, load 6.7-11): IQ4_XS 56.1, 51.4 ->
// 65.1, 70.3 tok/s (the 6-token tile; the old one ran 4 + 2 tokens, weights loaded twice, and
// with 12 sums GCC spilled); TQ2_0 61.3, 62.4 -> 71.7, 78.3 (integers instead of the float
// panels); IQ3_S 60.7 -> 79.2 and IQ2_XXS 60.5 -> 71.6 (tile and AVX2 decoders; the scalar
// decoders took 10% of the prompt). The tile alone (rows in L1/L2, one core) makes ~22-24 int16
// products per TSC cycle (2.45 GHz) against ~30 for the same instructions on fixed registers;
// a token-outer order, pre-broadcast x, software prefetch and a strip-contiguous panel gave
// nothing more.
#include "journey/kernels/blocks/gemm_iq16.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <immintrin.h>
#include <limits>
#include <stdexcept>
#include <vector>

#include "journey/kernels/blocks/layout.h"
#include "journey/kernels/half.h"
#include "journey/kernels/thread_pool.h"
#include "../avx2_lanes.h"
#include "iq_grids.h"

namespace journey {
namespace {

constexpr int kRows = 64;          // rows a panel
constexpr int kChunk = 4;          // super-blocks decoded at a time
constexpr int kTokens = 6;         // tokens a tile
constexpr int kPairs = 128;        // input pairs a super-block

// 8 grid bytes times S, negated where the sign bit is set.
inline void put8(int16_t* w, uint64_t grid, uint8_t signs, int S) {
    for (int j = 0; j < 8; ++j) {
        const int v = int((grid >> (8 * j)) & 0xff) * S;
        w[j] = int16_t((signs >> j) & 1 ? -v : v);
    }
}

inline void put4(int16_t* w, uint32_t grid, uint8_t signs, int S) {
    for (int j = 0; j < 4; ++j) {
        const int v = int((grid >> (8 * j)) & 0xff) * S;
        w[j] = int16_t((signs >> j) & 1 ? -v : v);
    }
}

// The decoders: dequantize.cpp's layouts, integers instead of floats.
void iq2_xxs(const unsigned char* b, int16_t* w, float& dw) {
    dw = fp16_to_fp32(b) * 0.125f;
    for (int ib = 0; ib < 8; ++ib) {
        const unsigned char* q = b + 2 + 8 * ib;
        const uint32_t aux = u32_at(q + 4);
        const int S = 2 * int(aux >> 28) + 1;
        for (int l = 0; l < 4; ++l, w += 8) put8(w, kIq2xxsGrid[q[l]], iq_signs((aux >> (7 * l)) & 127), S);
    }
}

void iq2_xs(const unsigned char* b, int16_t* w, float& dw) {
    dw = fp16_to_fp32(b) * 0.125f;
    const unsigned char* scales = b + 66;
    for (int ib = 0; ib < 8; ++ib) {
        const int S[2] = {2 * (scales[ib] & 0xf) + 1, 2 * (scales[ib] >> 4) + 1};
        for (int l = 0; l < 4; ++l, w += 8) {
            const uint16_t q = u16_at(b + 2 + 2 * (4 * ib + l));
            put8(w, kIq2xsGrid[q & 511], iq_signs(q >> 9), S[l / 2]);
        }
    }
}

void iq2_s(const unsigned char* b, int16_t* w, float& dw) {
    dw = fp16_to_fp32(b) * 0.125f;
    const unsigned char* qs = b + 2;
    const unsigned char* signs = b + 34;
    const unsigned char* qh = b + 66;
    const unsigned char* scales = b + 74;
    for (int ib = 0; ib < 8; ++ib, qs += 4, signs += 4) {
        const int S[2] = {2 * (scales[ib] & 0xf) + 1, 2 * (scales[ib] >> 4) + 1};
        for (int l = 0; l < 4; ++l, w += 8) put8(w, kIq2sGrid[qs[l] | ((qh[ib] << (8 - 2 * l)) & 0x300)], signs[l], S[l / 2]);
    }
}

void iq3_xxs(const unsigned char* b, int16_t* w, float& dw) {
    dw = fp16_to_fp32(b) * 0.25f;
    const unsigned char* qs = b + 2;
    for (int ib = 0; ib < 8; ++ib, qs += 8) {
        const uint32_t aux = u32_at(b + 66 + 4 * ib);
        const int S = 2 * int(aux >> 28) + 1;
        for (int l = 0; l < 4; ++l, w += 8) {
            const uint8_t signs = iq_signs((aux >> (7 * l)) & 127);
            put4(w, kIq3xxsGrid[qs[2 * l]], signs, S);
            put4(w + 4, kIq3xxsGrid[qs[2 * l + 1]], uint8_t(signs >> 4), S);
        }
    }
}

void iq3_s(const unsigned char* b, int16_t* w, float& dw) {
    dw = fp16_to_fp32(b);
    const unsigned char* qs = b + 2;
    const unsigned char* qh = b + 66;
    const unsigned char* signs = b + 74;
    const unsigned char* scales = b + 106;
    for (int ib = 0; ib < 8; ++ib, qs += 8, signs += 4) {
        const int S = 1 + 2 * ((scales[ib / 2] >> (4 * (ib % 2))) & 0xf);
        for (int l = 0; l < 4; ++l, w += 8) {
            put4(w, kIq3sGrid[qs[2 * l] | ((qh[ib] << (8 - 2 * l)) & 256)], signs[l], S);
            put4(w + 4, kIq3sGrid[qs[2 * l + 1] | ((qh[ib] << (7 - 2 * l)) & 256)], uint8_t(signs[l] >> 4), S);
        }
    }
}

void iq4_xs(const unsigned char* b, int16_t* w, float& dw) {
    dw = fp16_to_fp32(b);
    const uint16_t scales_h = u16_at(b + 2);
    const unsigned char* scales_l = b + 4;
    const unsigned char* qs = b + 8;
    for (int ib = 0; ib < 8; ++ib, w += 32, qs += 16) {
        const int S = (((scales_l[ib / 2] >> 4 * (ib % 2)) & 0x0f) | (((scales_h >> 2 * ib) & 3) << 4)) - 32;
        for (int j = 0; j < 16; ++j) {
            w[j] = int16_t(S * kIq4Values[qs[j] & 0x0f]);
            w[j + 16] = int16_t(S * kIq4Values[qs[j] >> 4]);
        }
    }
}

// IQ1: 8 values of the grid (int8 in {-1, 0, 1}) as (8 g ± 1) S.
inline void put8_iq1(int16_t* w, uint64_t grid, int delta, int S) {
    for (int j = 0; j < 8; ++j) w[j] = int16_t((8 * int(int8_t(grid >> (8 * j))) + delta) * S);
}

void iq1_s(const unsigned char* b, int16_t* w, float& dw) {
    dw = fp16_to_fp32(b) * 0.125f;
    const unsigned char* qs = b + 2;
    for (int ib = 0; ib < 8; ++ib, qs += 4) {
        const uint16_t qh = u16_at(b + 34 + 2 * ib);
        const int S = 2 * ((qh >> 12) & 7) + 1, delta = qh & 0x8000 ? -1 : 1;
        for (int l = 0; l < 4; ++l, w += 8) put8_iq1(w, kIq1sGrid[qs[l] | (((qh >> (3 * l)) & 7) << 8)], delta, S);
    }
}

void iq1_m(const unsigned char* b, int16_t* w, float& dw) {
    const unsigned char* qs = b;
    const unsigned char* qh = b + 32;
    uint16_t sc[4];
    std::memcpy(sc, b + 48, 8);
    const uint16_t half = uint16_t((sc[0] >> 12) | ((sc[1] >> 8) & 0x00f0) | ((sc[2] >> 4) & 0x0f00) | (sc[3] & 0xf000));
    dw = fp16_to_fp32(half) * 0.125f;
    for (int ib = 0; ib < 8; ++ib, qs += 4, qh += 2) {
        const int S1 = 2 * ((sc[ib / 2] >> (6 * (ib % 2) + 0)) & 0x7) + 1;
        const int S2 = 2 * ((sc[ib / 2] >> (6 * (ib % 2) + 3)) & 0x7) + 1;
        const int idx[4] = {qs[0] | ((qh[0] << 8) & 0x700), qs[1] | ((qh[0] << 4) & 0x700), qs[2] | ((qh[1] << 8) & 0x700),
                            qs[3] | ((qh[1] << 4) & 0x700)};
        const int delta[4] = {qh[0] & 0x08 ? -1 : 1, qh[0] & 0x80 ? -1 : 1, qh[1] & 0x08 ? -1 : 1, qh[1] & 0x80 ? -1 : 1};
        for (int l = 0; l < 4; ++l, w += 8) put8_iq1(w, kIq1sGrid[idx[l]], delta[l], l < 2 ? S1 : S2);
    }
}

// The ternary types: d · t, t in {-1, 0, 1} (dequantize.cpp's layouts; TQ2_0's unused code 3
// gives t = 2, as ggml's dequantization does).
void tq2_0(const unsigned char* b, int16_t* w, float& dw) {
    dw = fp16_to_fp32(b + 64);
    for (int j = 0; j < 64; j += 32)
        for (int l = 0; l < 4; ++l)
            for (int m = 0; m < 32; ++m) *w++ = int16_t(((b[j + m] >> (2 * l)) & 3) - 1);
}

// TQ1_0's trit n of a byte of base-3 digits: ggml's ((uint8_t)(q · 3^n) · 3) >> 8, minus 1.
inline int16_t trit16(uint8_t q, int n) {
    static constexpr uint8_t kPow3[5] = {1, 3, 9, 27, 81};
    return int16_t(((uint8_t(q * kPow3[n]) * 3) >> 8) - 1);
}

void tq1_0(const unsigned char* b, int16_t* w, float& dw) {
    dw = fp16_to_fp32(b + 52);
    for (int n = 0; n < 5; ++n)
        for (int m = 0; m < 32; ++m) *w++ = trit16(b[m], n);
    for (int n = 0; n < 5; ++n)
        for (int m = 0; m < 16; ++m) *w++ = trit16(b[32 + m], n);
    for (int n = 0; n < 4; ++n)
        for (int j = 0; j < 4; ++j) *w++ = trit16(b[48 + j], n);
}

// AVX2 decoders of the types of the 1B bench files (IQ2_XXS, IQ3_S, IQ4_XS, TQ2_0): the same
// integers as the ones above (tests: iq16_decode_avx2 against iq16_decode), 8 or 16 at a time.
// put8 as 8 int16 lanes: the grid bytes widened, times S, negated where the sign bit is set
// ((v ^ m) - m with m all ones there).
JOURNEY_AVX2 inline void put8_avx2(int16_t* w, uint64_t grid, uint8_t signs, int S) {
    const __m128i bits = _mm_setr_epi16(1, 2, 4, 8, 16, 32, 64, 128);
    const __m128i v = _mm_mullo_epi16(_mm_cvtepu8_epi16(_mm_cvtsi64_si128(int64_t(grid))), _mm_set1_epi16(int16_t(S)));
    const __m128i m = _mm_cmpeq_epi16(_mm_and_si128(_mm_set1_epi16(signs), bits), bits);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(w), _mm_sub_epi16(_mm_xor_si128(v, m), m));
}

JOURNEY_AVX2 void iq2_xxs_avx2(const unsigned char* b, int16_t* w, float& dw) {
    dw = fp16_to_fp32(b) * 0.125f;
    for (int ib = 0; ib < 8; ++ib) {
        const unsigned char* q = b + 2 + 8 * ib;
        const uint32_t aux = u32_at(q + 4);
        const int S = 2 * int(aux >> 28) + 1;
        for (int l = 0; l < 4; ++l, w += 8) put8_avx2(w, kIq2xxsGrid[q[l]], iq_signs((aux >> (7 * l)) & 127), S);
    }
}

JOURNEY_AVX2 void iq3_s_avx2(const unsigned char* b, int16_t* w, float& dw) {
    dw = fp16_to_fp32(b);
    const unsigned char* qs = b + 2;
    const unsigned char* qh = b + 66;
    const unsigned char* signs = b + 74;
    const unsigned char* scales = b + 106;
    for (int ib = 0; ib < 8; ++ib, qs += 8, signs += 4) {
        const int S = 1 + 2 * ((scales[ib / 2] >> (4 * (ib % 2))) & 0xf);
        for (int l = 0; l < 4; ++l, w += 8) {
            const uint64_t g0 = kIq3sGrid[qs[2 * l] | ((qh[ib] << (8 - 2 * l)) & 256)];
            const uint64_t g1 = kIq3sGrid[qs[2 * l + 1] | ((qh[ib] << (7 - 2 * l)) & 256)];
            put8_avx2(w, g0 | (g1 << 32), signs[l], S);  // put4's two halves: signs' low, high nibble
        }
    }
}

JOURNEY_AVX2 void iq4_xs_avx2(const unsigned char* b, int16_t* w, float& dw) {
    dw = fp16_to_fp32(b);
    const uint16_t scales_h = u16_at(b + 2);
    const unsigned char* scales_l = b + 4;
    const unsigned char* qs = b + 8;
    const __m128i values = _mm_loadu_si128(reinterpret_cast<const __m128i*>(kIq4Values)), low = _mm_set1_epi8(0x0f);
    for (int ib = 0; ib < 8; ++ib, w += 32, qs += 16) {
        const int S = (((scales_l[ib / 2] >> 4 * (ib % 2)) & 0x0f) | (((scales_h >> 2 * ib) & 3) << 4)) - 32;
        const __m256i s = _mm256_set1_epi16(int16_t(S));
        const __m128i q = _mm_loadu_si128(reinterpret_cast<const __m128i*>(qs));
        const __m128i lo = _mm_shuffle_epi8(values, _mm_and_si128(q, low)), hi = _mm_shuffle_epi8(values, _mm_and_si128(_mm_srli_epi16(q, 4), low));
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(w), _mm256_mullo_epi16(_mm256_cvtepi8_epi16(lo), s));
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(w + 16), _mm256_mullo_epi16(_mm256_cvtepi8_epi16(hi), s));
    }
}

JOURNEY_AVX2 void tq2_0_avx2(const unsigned char* b, int16_t* w, float& dw) {
    dw = fp16_to_fp32(b + 64);
    const __m256i three = _mm256_set1_epi8(3), one = _mm256_set1_epi8(1);
    for (int j = 0; j < 64; j += 32) {
        const __m256i q = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b + j));
        for (int l = 0; l < 4; ++l, w += 32) {
            const __m256i t = _mm256_sub_epi8(_mm256_and_si256(_mm256_srli_epi16(q, 2 * l), three), one);
            _mm256_storeu_si256(reinterpret_cast<__m256i*>(w), _mm256_cvtepi8_epi16(_mm256_castsi256_si128(t)));
            _mm256_storeu_si256(reinterpret_cast<__m256i*>(w + 16), _mm256_cvtepi8_epi16(_mm256_extracti128_si256(t, 1)));
        }
    }
}

// The one float statement of both kernels: a super-block's exact sum into the running total.
inline float step(float acc, int32_t isum, float d_w, float d_x) { return std::fma(float(isum), d_w * d_x, acc); }

// Rows r0 .. r0 + 63 (those past n_out: zeros), super-blocks k0 .. k1 of W, into
// panel[(k - k0) · kPairs + pair][row] (two int16 of inputs 2 pair, 2 pair + 1 in one int32)
// and dw[(k - k0) · kRows + row].
void decode_panel(const Matrix& W, int64_t r0, int64_t k0, int64_t k1, int32_t* panel, float* dw, bool avx2) {
    const size_t row_bytes = dtype_bytes(W.dtype, uint64_t(W.cols)), block_bytes = dtype_bytes(W.dtype, 256);
    alignas(64) int16_t w[256];
    for (int r = 0; r < kRows; ++r) {
        for (int64_t k = k0; k < k1; ++k) {
            int32_t* P = panel + (k - k0) * kPairs * kRows + r;
            float& d = dw[(k - k0) * kRows + r];
            if (r0 + r >= W.rows) {
                d = 0.0f;
                for (int p = 0; p < kPairs; ++p) P[p * kRows] = 0;
                continue;
            }
            const std::byte* block = W.data + size_t(r0 + r) * row_bytes + size_t(k) * block_bytes;
            if (!avx2 || !iq16_decode_avx2(W.dtype, block, w, d)) iq16_decode(W.dtype, block, w, d);
            for (int p = 0; p < kPairs; ++p) {
                int32_t v;
                std::memcpy(&v, w + 2 * p, 4);
                P[p * kRows] = v;
            }
        }
    }
}

// sums[t · kRows + row] of tokens t < nt over super-blocks k0 .. k1 (the panel's), portable.
void tile_portable(const int32_t* panel, const float* dw, const int16_t* q, const float* dx, int64_t n_in, int64_t nk,
                   int64_t k0, int64_t k1, int nt, float* sums) {
    for (int t = 0; t < nt; ++t)
        for (int64_t k = k0; k < k1; ++k) {
            const int16_t* x = q + t * n_in + k * 256;
            const int32_t* P = panel + (k - k0) * kPairs * kRows;
            for (int r = 0; r < kRows; ++r) {
                int64_t isum = 0;
                for (int p = 0; p < kPairs; ++p) {
                    int16_t w2[2];
                    std::memcpy(w2, P + p * kRows + r, 4);
                    isum += int64_t(w2[0]) * x[2 * p] + int64_t(w2[1]) * x[2 * p + 1];
                }
                float& s = sums[t * kRows + r];
                s = step(s, int32_t(isum), dw[(k - k0) * kRows + r], dx[t * nk + k]);
            }
        }
}

#define JOURNEY_VNNI __attribute__((target("avx512f,avx512bw,avx512vl,avx512vnni,fma")))

// One super-block of 64 rows x NT tokens: isum[t · 64 + row] (apart from the float step, so
// that the sums stay in registers).
// acc += pairs of w · x: vpdpwssd written out; with the intrinsic (_mm512_dpwssd_epi32) GCC 12
// kept the 24 sums on the stack, loaded and stored every pair.
JOURNEY_VNNI inline void dpwssd(__m512i& acc, __m512i w, __m512i x) { asm("vpdpwssd %2, %1, %0" : "+v"(acc) : "v"(w), "v"(x)); }

template <int NT>
JOURNEY_VNNI __attribute__((noinline)) void sb_vnni(const int32_t* P, const int32_t* X, int64_t ldx, int32_t* isum) {
    // 24 named sums: as an array GCC kept them on the stack
    __m512i a00 = _mm512_setzero_si512(), a01 = _mm512_setzero_si512(), a02 = _mm512_setzero_si512(), a03 = _mm512_setzero_si512(), a10 = _mm512_setzero_si512(), a11 = _mm512_setzero_si512(), a12 = _mm512_setzero_si512(), a13 = _mm512_setzero_si512(), a20 = _mm512_setzero_si512(), a21 = _mm512_setzero_si512(), a22 = _mm512_setzero_si512(), a23 = _mm512_setzero_si512(), a30 = _mm512_setzero_si512(), a31 = _mm512_setzero_si512(), a32 = _mm512_setzero_si512(), a33 = _mm512_setzero_si512(), a40 = _mm512_setzero_si512(), a41 = _mm512_setzero_si512(), a42 = _mm512_setzero_si512(), a43 = _mm512_setzero_si512(), a50 = _mm512_setzero_si512(), a51 = _mm512_setzero_si512(), a52 = _mm512_setzero_si512(), a53 = _mm512_setzero_si512();
    for (int p = 0; p < kPairs; ++p, P += kRows, ++X) {
        const __m512i w0 = _mm512_load_si512(P), w1 = _mm512_load_si512(P + 16);
        const __m512i w2 = _mm512_load_si512(P + 32), w3 = _mm512_load_si512(P + 48);
        // token t's pair of x against the 64 rows' pairs (macros: the same code as written out)
#define JOURNEY_IQ16_TOKEN(t, a0, a1, a2, a3)                    \
    if constexpr (NT > t) {                                      \
        const __m512i x = _mm512_set1_epi32(X[t * ldx]);         \
        dpwssd(a0, w0, x), dpwssd(a1, w1, x), dpwssd(a2, w2, x), dpwssd(a3, w3, x); \
    }
        JOURNEY_IQ16_TOKEN(0, a00, a01, a02, a03)
        JOURNEY_IQ16_TOKEN(1, a10, a11, a12, a13)
        JOURNEY_IQ16_TOKEN(2, a20, a21, a22, a23)
        JOURNEY_IQ16_TOKEN(3, a30, a31, a32, a33)
        JOURNEY_IQ16_TOKEN(4, a40, a41, a42, a43)
        JOURNEY_IQ16_TOKEN(5, a50, a51, a52, a53)
#undef JOURNEY_IQ16_TOKEN
    }
#define JOURNEY_IQ16_STORE(t, a0, a1, a2, a3)                                                        \
    if constexpr (NT > t) {                                                                          \
        _mm512_store_si512(isum + t * kRows, a0), _mm512_store_si512(isum + t * kRows + 16, a1);     \
        _mm512_store_si512(isum + t * kRows + 32, a2), _mm512_store_si512(isum + t * kRows + 48, a3); \
    }
    JOURNEY_IQ16_STORE(0, a00, a01, a02, a03)
    JOURNEY_IQ16_STORE(1, a10, a11, a12, a13)
    JOURNEY_IQ16_STORE(2, a20, a21, a22, a23)
    JOURNEY_IQ16_STORE(3, a30, a31, a32, a33)
    JOURNEY_IQ16_STORE(4, a40, a41, a42, a43)
    JOURNEY_IQ16_STORE(5, a50, a51, a52, a53)
#undef JOURNEY_IQ16_STORE
}

template <int NT>
JOURNEY_VNNI void tile_vnni(const int32_t* panel, const float* dw, const int16_t* q, const float* dx, int64_t n_in, int64_t nk,
                            int64_t k0, int64_t k1, float* sums) {
    alignas(64) int32_t isum[NT * kRows];
    for (int64_t k = k0; k < k1; ++k) {
        sb_vnni<NT>(panel + (k - k0) * kPairs * kRows, reinterpret_cast<const int32_t*>(q + k * 256), n_in / 2, isum);
        for (int t = 0; t < NT; ++t) {
            const __m512 sx = _mm512_set1_ps(dx[t * nk + k]);
            for (int i = 0; i < 4; ++i) {
                float* s = sums + t * kRows + 16 * i;
                const __m512 scale = _mm512_mul_ps(_mm512_loadu_ps(dw + (k - k0) * kRows + 16 * i), sx);
                const __m512 f = _mm512_maskz_cvtepi32_ps(0xffff, _mm512_load_si512(isum + t * kRows + 16 * i));
                _mm512_storeu_ps(s, _mm512_fmadd_ps(f, scale, _mm512_loadu_ps(s)));
            }
        }
    }
}

JOURNEY_VNNI void tile_fast(const int32_t* panel, const float* dw, const int16_t* q, const float* dx, int64_t n_in, int64_t nk,
                            int64_t k0, int64_t k1, int nt, float* sums) {
    switch (nt) {
        case 6: return tile_vnni<6>(panel, dw, q, dx, n_in, nk, k0, k1, sums);
        case 5: return tile_vnni<5>(panel, dw, q, dx, n_in, nk, k0, k1, sums);
        case 4: return tile_vnni<4>(panel, dw, q, dx, n_in, nk, k0, k1, sums);
        case 3: return tile_vnni<3>(panel, dw, q, dx, n_in, nk, k0, k1, sums);
        case 2: return tile_vnni<2>(panel, dw, q, dx, n_in, nk, k0, k1, sums);
        default: return tile_vnni<1>(panel, dw, q, dx, n_in, nk, k0, k1, sums);
    }
}

// AVX2 (CPUs without AVX-512 VNNI's vpdpwssd): vpmaddwd gives each int32 lane w0 x0 + w1 x1
// exactly (|w| <= 4064, |x| <= 32767: no overflow), vpaddd adds it modulo 2^32 as vpdpwssd does,
// so the register again holds the exact sum: the same bits. 16 registers of 8 lanes: a pass is
// 6 tokens x 16 rows (12 sums, the 2 weight vectors, x's pair broadcast and the product: all 16
// ymm, written in assembly: GCC 12 kept 7 of the 12 sums of the same intrinsics on the stack),
// over one super-block's 16-row strip of the panel (8 KiB, in L1) for every token of the prompt
// before the next strip; a tail of 1-5 tokens takes sb_avx2 (up to 4 tokens a pass in
// registers).
template <int NT>
JOURNEY_AVX2 void sb_avx2(const int32_t* P, const int32_t* X, int64_t ldx, int32_t* isum) {
    __m256i acc[NT][2];
    for (int t = 0; t < NT; ++t)
        for (int h = 0; h < 2; ++h) acc[t][h] = _mm256_setzero_si256();
    for (int p = 0; p < kPairs; ++p, P += kRows, ++X) {
        const __m256i w0 = _mm256_load_si256(reinterpret_cast<const __m256i*>(P)), w1 = _mm256_load_si256(reinterpret_cast<const __m256i*>(P + 8));
        for (int t = 0; t < NT; ++t) {
            const __m256i x = _mm256_set1_epi32(X[t * ldx]);
            acc[t][0] = _mm256_add_epi32(acc[t][0], _mm256_madd_epi16(w0, x));
            acc[t][1] = _mm256_add_epi32(acc[t][1], _mm256_madd_epi16(w1, x));
        }
    }
    for (int t = 0; t < NT; ++t)
        for (int h = 0; h < 2; ++h) _mm256_store_si256(reinterpret_cast<__m256i*>(isum + t * 16 + 8 * h), acc[t][h]);
}

// One token's pair of x (the address x) against the strip's two weight vectors (ymm12, ymm13),
// into sums ymm<a0>, ymm<a1>; ymm14 holds the broadcast, ymm15 the product.
#define JOURNEY_IQ16_TOK(x, a0, a1)                                                     \
    "vpbroadcastd " x ", %%ymm14\n\t"                                                   \
    "vpmaddwd %%ymm14, %%ymm12, %%ymm15\n\tvpaddd %%ymm15, %%ymm" #a0 ", %%ymm" #a0 "\n\t" \
    "vpmaddwd %%ymm14, %%ymm13, %%ymm15\n\tvpaddd %%ymm15, %%ymm" #a1 ", %%ymm" #a1 "\n\t"
// One input pair (weights at byte offset pw of P, x at byte offset px) for the 6 tokens: x0 + i ld
// for tokens 0-2, x3 + i ld for 3-5.
#define JOURNEY_IQ16_PAIR(pw, px)                                                                                       \
    "vmovdqa " pw "(%[P]), %%ymm12\n\tvmovdqa " pw "+32(%[P]), %%ymm13\n\t" JOURNEY_IQ16_TOK(px "(%[x0])", 0, 1)       \
        JOURNEY_IQ16_TOK(px "(%[x0],%[ld],1)", 2, 3) JOURNEY_IQ16_TOK(px "(%[x0],%[ld],2)", 4, 5)                      \
            JOURNEY_IQ16_TOK(px "(%[x3])", 6, 7) JOURNEY_IQ16_TOK(px "(%[x3],%[ld],1)", 8, 9)                           \
                JOURNEY_IQ16_TOK(px "(%[x3],%[ld],2)", 10, 11)

// 6 tokens x 16 rows of one super-block: isum[t · 16 + row], as sb_avx2<6> would give them.
JOURNEY_AVX2 void sb_avx2_6(const int32_t* P, const int32_t* X, int64_t ldx, int32_t* isum) {
    const int32_t* x0 = X;
    const int32_t* x3 = X + 3 * ldx;
    const int32_t* end = P + kPairs * kRows;
    const int64_t ld = ldx * 4;  // bytes from one token's x to the next
    static_assert(kPairs % 2 == 0 && kRows == 64);
    asm volatile(
        "vpxor %%xmm0, %%xmm0, %%xmm0\n\tvpxor %%xmm1, %%xmm1, %%xmm1\n\tvpxor %%xmm2, %%xmm2, %%xmm2\n\t"
        "vpxor %%xmm3, %%xmm3, %%xmm3\n\tvpxor %%xmm4, %%xmm4, %%xmm4\n\tvpxor %%xmm5, %%xmm5, %%xmm5\n\t"
        "vpxor %%xmm6, %%xmm6, %%xmm6\n\tvpxor %%xmm7, %%xmm7, %%xmm7\n\tvpxor %%xmm8, %%xmm8, %%xmm8\n\t"
        "vpxor %%xmm9, %%xmm9, %%xmm9\n\tvpxor %%xmm10, %%xmm10, %%xmm10\n\tvpxor %%xmm11, %%xmm11, %%xmm11\n\t"
        "1:\n\t"  // two input pairs an iteration: P's rows are kRows = 64 int32 (256 bytes) apart
        JOURNEY_IQ16_PAIR("0", "0") JOURNEY_IQ16_PAIR("256", "4")
        "add $512, %[P]\n\tadd $8, %[x0]\n\tadd $8, %[x3]\n\tcmp %[end], %[P]\n\tjne 1b\n\t"
        "vmovdqa %%ymm0, (%[isum])\n\tvmovdqa %%ymm1, 32(%[isum])\n\tvmovdqa %%ymm2, 64(%[isum])\n\t"
        "vmovdqa %%ymm3, 96(%[isum])\n\tvmovdqa %%ymm4, 128(%[isum])\n\tvmovdqa %%ymm5, 160(%[isum])\n\t"
        "vmovdqa %%ymm6, 192(%[isum])\n\tvmovdqa %%ymm7, 224(%[isum])\n\tvmovdqa %%ymm8, 256(%[isum])\n\t"
        "vmovdqa %%ymm9, 288(%[isum])\n\tvmovdqa %%ymm10, 320(%[isum])\n\tvmovdqa %%ymm11, 352(%[isum])\n\t"
        : [P] "+r"(P), [x0] "+r"(x0), [x3] "+r"(x3)
        : [ld] "r"(ld), [end] "r"(end), [isum] "r"(isum)
        : "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9", "xmm10", "xmm11", "xmm12", "xmm13",
          "xmm14", "xmm15", "memory", "cc");
}
#undef JOURNEY_IQ16_PAIR
#undef JOURNEY_IQ16_TOK

// Tokens 0 .. NT - 1 (NT <= 6) of super-block k against a 16-row strip (P its weights, dwk its
// d_w): the sums, then step() for each (token, row): fma(float(isum), d_w · d_x, s).
template <int NT>
JOURNEY_AVX2 void strip_avx2(const int32_t* P, const float* dwk, const int16_t* q, const float* dx, int64_t n_in, int64_t nk,
                             int64_t k, float* sums) {
    alignas(32) int32_t isum[6 * 16];
    const auto* X = reinterpret_cast<const int32_t*>(q + k * 256);
    if constexpr (NT == 6) sb_avx2_6(P, X, n_in / 2, isum);
    else {
        sb_avx2<std::min(NT, 4)>(P, X, n_in / 2, isum);
        if constexpr (NT > 4) sb_avx2<NT - 4>(P, X + 4 * (n_in / 2), n_in / 2, isum + 4 * 16);
    }
    for (int t = 0; t < NT; ++t) {
        const __m256 sx = _mm256_set1_ps(dx[t * nk + k]);
        for (int h = 0; h < 2; ++h) {
            float* s = sums + t * kRows + 8 * h;
            const __m256 scale = _mm256_mul_ps(_mm256_loadu_ps(dwk + 8 * h), sx);
            const __m256 f = _mm256_cvtepi32_ps(_mm256_load_si256(reinterpret_cast<const __m256i*>(isum + t * 16 + 8 * h)));
            _mm256_storeu_ps(s, _mm256_fmadd_ps(f, scale, _mm256_loadu_ps(s)));
        }
    }
}

// Tokens 0 .. NT - 1 against super-blocks k0 .. k1 of the panel: per super-block (in order, so
// each sum takes its steps in k's order) and strip of 16 rows. (The strip's weights, 8 KiB, come
// from L2 for each 6 tokens, their x from L1; the other order, every token per strip, read x
// from L2 and L3 and was 10-15% slower.)
template <int NT>
JOURNEY_AVX2 void tile_avx2(const int32_t* panel, const float* dw, const int16_t* q, const float* dx, int64_t n_in, int64_t nk,
                            int64_t k0, int64_t k1, float* sums) {
    for (int64_t k = k0; k < k1; ++k)
        for (int j = 0; j < kRows / 16; ++j)
            strip_avx2<NT>(panel + (k - k0) * kPairs * kRows + 16 * j, dw + (k - k0) * kRows + 16 * j, q, dx, n_in, nk, k, sums + 16 * j);
}

void tile_avx2_any(const int32_t* panel, const float* dw, const int16_t* q, const float* dx, int64_t n_in, int64_t nk,
                   int64_t k0, int64_t k1, int nt, float* sums) {
    switch (nt) {
        case 6: return tile_avx2<6>(panel, dw, q, dx, n_in, nk, k0, k1, sums);
        case 5: return tile_avx2<5>(panel, dw, q, dx, n_in, nk, k0, k1, sums);
        case 4: return tile_avx2<4>(panel, dw, q, dx, n_in, nk, k0, k1, sums);
        case 3: return tile_avx2<3>(panel, dw, q, dx, n_in, nk, k0, k1, sums);
        case 2: return tile_avx2<2>(panel, dw, q, dx, n_in, nk, k0, k1, sums);
        default: return tile_avx2<1>(panel, dw, q, dx, n_in, nk, k0, k1, sums);
    }
}

template <typename T>
struct AlignedBuffer {
    std::vector<T> v;
    T* get(size_t n) {  // 64-byte aligned, n elements
        v.resize(n + 64 / sizeof(T));
        const auto a = reinterpret_cast<uintptr_t>(v.data());
        return v.data() + ((64 - a % 64) % 64) / sizeof(T);
    }
};

}  // namespace

bool has_iq16(DType t) {
    switch (t) {
        case DType::IQ2_XXS:
        case DType::IQ2_XS:
        case DType::IQ2_S:
        case DType::IQ3_XXS:
        case DType::IQ3_S:
        case DType::IQ4_XS:
        case DType::IQ1_S:
        case DType::IQ1_M:
        case DType::TQ1_0:
        case DType::TQ2_0: return true;
        default: return false;
    }
}

int iq16_max_weight(DType t) {
    switch (t) {
        case DType::IQ2_XXS:
        case DType::IQ2_XS:
        case DType::IQ2_S: return 31 * 43;
        case DType::IQ3_XXS: return 31 * 62;
        case DType::IQ3_S: return 31 * 15;
        case DType::IQ4_XS: return 32 * 127;
        case DType::IQ1_S:
        case DType::IQ1_M: return 15 * 9;
        case DType::TQ1_0: return 1;
        case DType::TQ2_0: return 2;  // its 2-bit code 3 (never written by a quantizer) decodes to 2
        default: throw std::logic_error("iq16: not an importance-matrix type");
    }
}

void iq16_decode(DType t, const std::byte* block, int16_t w[256], float& d_w) {
    const auto* b = reinterpret_cast<const unsigned char*>(block);
    switch (t) {
        case DType::IQ2_XXS: return iq2_xxs(b, w, d_w);
        case DType::IQ2_XS: return iq2_xs(b, w, d_w);
        case DType::IQ2_S: return iq2_s(b, w, d_w);
        case DType::IQ3_XXS: return iq3_xxs(b, w, d_w);
        case DType::IQ3_S: return iq3_s(b, w, d_w);
        case DType::IQ4_XS: return iq4_xs(b, w, d_w);
        case DType::IQ1_S: return iq1_s(b, w, d_w);
        case DType::IQ1_M: return iq1_m(b, w, d_w);
        case DType::TQ1_0: return tq1_0(b, w, d_w);
        case DType::TQ2_0: return tq2_0(b, w, d_w);
        default: throw std::logic_error("iq16: not an importance-matrix type");
    }
}

bool iq16_decode_avx2(DType t, const std::byte* block, int16_t w[256], float& d_w) {
    const auto* b = reinterpret_cast<const unsigned char*>(block);
    switch (t) {
        case DType::IQ2_XXS: iq2_xxs_avx2(b, w, d_w); return true;
        case DType::IQ3_S: iq3_s_avx2(b, w, d_w); return true;
        case DType::IQ4_XS: iq4_xs_avx2(b, w, d_w); return true;
        case DType::TQ2_0: tq2_0_avx2(b, w, d_w); return true;
        default: return false;
    }
}

void iq16_quantize_x(DType t, const float* x, int64_t n, int16_t* q, float* d_x) {
    const double L = double((int64_t{1} << 31) - 1) / iq16_max_weight(t);
    const float limit = float(0.98 * std::floor(L) - 128.0);
    for (int64_t k = 0; k < n / 256; ++k, x += 256, q += 256) {
        float amax = 0.0f, sabs = 0.0f;
        for (int i = 0; i < 256; ++i) {
            amax = std::max(amax, std::abs(x[i]));
            sabs += std::abs(x[i]);
        }
        const float d = std::max(amax / 32767.0f, sabs / limit);
        if (!std::isfinite(d)) {  // inf or nan in x: the product is not a number either
            std::fill(q, q + 256, int16_t(0));
            d_x[k] = std::numeric_limits<float>::quiet_NaN();
            continue;
        }
        d_x[k] = d;
        const float inv = d > 0.0f ? 1.0f / d : 0.0f;
        for (int i = 0; i < 256; ++i) q[i] = int16_t(std::clamp(std::nearbyint(x[i] * inv), -32767.0f, 32767.0f));
    }
}

void matmul_iq16(float* out, const float* x, const Matrix& W, int T, bool fast) {
    if (W.layout != Layout::Linear || W.cols % 256 != 0) throw std::logic_error("matmul_iq16: Linear weights in whole super-blocks");
    const int64_t n_in = W.cols, n_out = W.rows, nk = n_in / 256;
    // x: every token once (the caller's buffers; the workers read them)
    thread_local std::vector<int16_t> t_q;
    thread_local std::vector<float> t_dx;
    t_q.resize(size_t(T) * size_t(n_in));
    t_dx.resize(size_t(T) * size_t(nk));
    int16_t* q = t_q.data();
    float* dx = t_dx.data();
    {
        std::atomic<int> next{0};
        auto quantize = [&](int, int) {
            for (int t; (t = next.fetch_add(1, std::memory_order_relaxed)) < T;)
                iq16_quantize_x(W.dtype, x + size_t(t) * size_t(n_in), n_in, q + size_t(t) * size_t(n_in), dx + size_t(t) * size_t(nk));
        };
        if (T < 8) quantize(0, 1);
        else thread_pool().run(quantize);
    }
    const int64_t panels = (n_out + kRows - 1) / kRows;
    const bool avx2 = !fast && avx2_kernels();
    std::atomic<int64_t> next{0};
    auto work = [&](int, int) {
        thread_local AlignedBuffer<int32_t> t_panel;
        thread_local AlignedBuffer<float> t_dw, t_sums;
        int32_t* panel = t_panel.get(size_t(kChunk) * kPairs * kRows);
        float* dw = t_dw.get(size_t(kChunk) * kRows);
        float* sums = t_sums.get(size_t(T) * kRows);
        for (int64_t g; (g = next.fetch_add(1, std::memory_order_relaxed)) < panels;) {
            const int64_t r0 = g * kRows;
            std::fill(sums, sums + size_t(T) * kRows, 0.0f);
            for (int64_t k0 = 0; k0 < nk; k0 += kChunk) {
                const int64_t k1 = std::min(nk, k0 + kChunk);
                decode_panel(W, r0, k0, k1, panel, dw, avx2_kernels());
                for (int t0 = 0; t0 < T; t0 += kTokens) {
                    const int nt = std::min(kTokens, T - t0);
                    const int16_t* qt = q + size_t(t0) * size_t(n_in);
                    const float* dxt = dx + size_t(t0) * size_t(nk);
                    float* st = sums + size_t(t0) * kRows;
                    if (fast) tile_fast(panel, dw, qt, dxt, n_in, nk, k0, k1, nt, st);
                    else if (avx2) tile_avx2_any(panel, dw, qt, dxt, n_in, nk, k0, k1, nt, st);
                    else tile_portable(panel, dw, qt, dxt, n_in, nk, k0, k1, nt, st);
                }
            }
            const int nr = int(std::min<int64_t>(kRows, n_out - r0));
            for (int t = 0; t < T; ++t) std::copy(sums + size_t(t) * kRows, sums + size_t(t) * kRows + nr, out + size_t(t) * size_t(n_out) + r0);
        }
    };
    thread_pool().run(work);
}

}  // namespace journey
