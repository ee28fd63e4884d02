// K-quant rows (Q4_K, Q5_K, Q6_K) · Q8_K-quantized activations (the arithmetic is stated in
// include/journey/kernels/blocks/dot.h). The portable loop is the definition; the AVX-512 VNNI
// kernel does the same integer sums and the same float operations per lane, 16 lanes at a time,
// and the AVX2 one (CPUs without AVX-512 VNNI) the same integer sums 8 int32 lanes at a time and
// the same scalar float steps, so the three give the same bits.
#include "dot_kinds.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <vector>
#include <immintrin.h>

#include "journey/kernels/blocks/dot.h"
#include "journey/kernels/blocks/layout.h"
#include "journey/kernels/gemv.h"
#include "journey/kernels/half.h"
#include "../avx2_lanes.h"

namespace journey {
namespace {

constexpr int64_t kSuper = 256;
constexpr size_t kTokensGroupBytes = 32768;  // dot_rows_k_tokens_avx2's rows per pass  // elements per K-quant super-block: 4 pairs of x blocks

// One super-block, unpacked for the portable loop: q[256] as stored (Q4_K 0..15, Q5_K 0..31,
// Q6_K q + 32 = 0..63), the scales and mins of the eight sub-blocks of 32 (Q4_K, Q5_K) or the
// sixteen scales of the sub-blocks of 16 (Q6_K), and d, dmin.
struct Unpacked {
    uint8_t q[kSuper];
    int32_t scale[8], min[8], sc16[16];
    float d, dmin;
};

// Q4_K, and Q5_K (kFive) whose fifth bits lie in qh[32] before the nibbles: bit 2i of qh[l]
// for element l of the i-th 64, bit 2i+1 for element l + 32.
template <bool kFive>
void unpack_q45_k(const unsigned char* b, Unpacked& u) {
    u.d = fp16_to_fp32(b);
    u.dmin = fp16_to_fp32(b + 2);
    const unsigned char* qh = b + 16;
    const unsigned char* qs = b + (kFive ? 48 : 16);
    for (int i = 0; i < 4; ++i)  // 64 elements: low nibbles of 32 bytes, then their high nibbles
        for (int l = 0; l < 32; ++l) {
            u.q[64 * i + l] = uint8_t((qs[32 * i + l] & 0x0f) | (kFive ? ((qh[l] >> (2 * i)) & 1) << 4 : 0));
            u.q[64 * i + 32 + l] = uint8_t((qs[32 * i + l] >> 4) | (kFive ? ((qh[l] >> (2 * i + 1)) & 1) << 4 : 0));
        }
    for (int s = 0; s < 8; ++s) {  // sub-block s: elements 32s .. 32s+31, groups of 4 8s .. 8s+7
        uint8_t sc, m;
        scale_min_k4(s, b + 4, sc, m);
        u.scale[s] = sc;
        u.min[s] = m;
    }
}

void unpack_q6_k(const unsigned char* b, Unpacked& u) {
    const unsigned char* ql = b;
    const unsigned char* qh = b + 128;
    const auto* sc = reinterpret_cast<const int8_t*>(b + 192);
    u.d = fp16_to_fp32(b + 208);
    u.dmin = 0.0f;
    for (int h = 0; h < 2; ++h, ql += 64, qh += 32)
        for (int l = 0; l < 32; ++l) {
            uint8_t* q = u.q + 128 * h;
            q[l] = uint8_t((ql[l] & 0x0f) | ((qh[l] & 3) << 4));
            q[l + 32] = uint8_t((ql[l + 32] & 0x0f) | (((qh[l] >> 2) & 3) << 4));
            q[l + 64] = uint8_t((ql[l] >> 4) | (((qh[l] >> 4) & 3) << 4));
            q[l + 96] = uint8_t((ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4));
        }
    for (int j = 0; j < 16; ++j) u.sc16[j] = sc[j];
}

// Q6_K: one integer sum per super-block (blocks/dot.h).
float dot_row_portable_q6(const std::byte* row, const QuantizedActivations& x) {
    float acc = 0.0f;
    Unpacked u;
    for (int64_t k = 0; k < x.n / kSuper; ++k) {
        unpack_q6_k(reinterpret_cast<const unsigned char*>(row + size_t(k) * 210), u);
        const int8_t* qx = x.q.data() + k * kSuper;
        const int16_t* s16 = x.sum16.data() + k * 16;
        int32_t isum = 0;
        for (int s = 0; s < 16; ++s) {
            int32_t t = 0;
            for (int i = 16 * s; i < 16 * s + 16; ++i) t += u.q[i] * qx[i];
            isum += u.sc16[s] * (t - 32 * s16[s]);
        }
        acc = std::fma(float(isum), u.d * x.d[size_t(k)], acc);
    }
    return acc;
}

// Q4_K, Q5_K: one integer sum and one min sum per super-block (blocks/dot.h).
template <bool kFive>
float dot_row_portable_q45(const std::byte* row, const QuantizedActivations& x) {
    float acc = 0.0f, accm = 0.0f;
    Unpacked u;
    for (int64_t k = 0; k < x.n / kSuper; ++k) {
        unpack_q45_k<kFive>(reinterpret_cast<const unsigned char*>(row + size_t(k) * (kFive ? 176 : 144)), u);
        const int8_t* qx = x.q.data() + k * kSuper;
        const int16_t* s32 = x.sum32.data() + k * 8;
        int32_t isum = 0, msum = 0;
        for (int s = 0; s < 8; ++s) {
            int32_t t = 0;
            for (int i = 32 * s; i < 32 * s + 32; ++i) t += u.q[i] * qx[i];
            isum += u.scale[s] * t;
            msum += u.min[s] * s32[s];
        }
        const float dx = x.d[size_t(k)];
        acc = std::fma(float(isum), u.d * dx, acc);
        accm = std::fma(float(msum), u.dmin * dx, accm);
    }
    return acc - accm;
}

// ---- AVX-512 VNNI ----------------------------------------------------------------------------
// Per vector of 64 elements: the weights as unsigned bytes, vpmaddubsw with x's quants (pairs,
// int16, no saturation: 63 · 127 · 2 < 2^15), vpdpwssd with each pair's sub-block scale (int16)
// into the 16 int32 lanes; the float work once per super-block.
// (The zero-masked forms with full masks spell out the plain ones without GCC 12's false
// "may be used uninitialized" warnings.)

#define JOURNEY_VNNI __attribute__((target("avx512f,avx512bw,avx512vl,avx512vnni,f16c")))

// Byte tables for the kernels, built once.
struct Tables {
    // Q4_K/Q5_K chunk c: vpshufb picks scale 2c (int16 at bytes 4c, 4c+1 of each 16-byte lane,
    // the eight scales broadcast) for the low 32 bytes, 2c+1 for the high 32.
    alignas(64) uint8_t shuf45[4][64];
    // Q5_K chunk c: the qh bit of each byte's fifth bit (2c low half, 2c+1 high half).
    alignas(64) uint8_t bit5[4][64];
    // Q6_K vector v: vpermw indices, int16 lane w takes scale 4v + w/8.
    alignas(64) int16_t perm6[4][32];
    constexpr Tables() : shuf45(), bit5(), perm6() {
        for (int c = 0; c < 4; ++c)
            for (int i = 0; i < 64; ++i) {
                const int s = 2 * c + (i >= 32);
                shuf45[c][i] = uint8_t(2 * s + (i % 2));
                bit5[c][i] = uint8_t(1 << s);
            }
        for (int v = 0; v < 4; ++v)
            for (int w = 0; w < 32; ++w) perm6[v][w] = int16_t(4 * v + w / 8);
    }
};
constexpr Tables kTables;

// The eight 6-bit scales and eight mins of a Q4_K/Q5_K super-block (12 packed bytes, as
// scale_min_k4 reads them) as 16 bytes: scales 0-7, then mins 0-7. Whole words at a time:
// bytes 0-3 hold scales 0-3 (low 6 bits), bytes 4-7 mins 0-3, bytes 8-11 the low 4 bits of
// scales 4-7 (low nibbles) and mins 4-7 (high nibbles), whose top 2 bits are the top 2 bits of
// bytes 0-3 (scales) and 4-7 (mins). SSE2 only: the VNNI and the AVX2 kernels inline it.
inline __m128i scales_mins_k4(const unsigned char* q) {
    uint32_t w[3];
    std::memcpy(w, q, 12);
    const uint32_t six = 0x3f3f3f3f, four = 0x0f0f0f0f, two = 0x03030303;
    // in registers (a store of four words and a 16-byte load would miss store forwarding)
    return _mm_set_epi32(int(((w[2] >> 4) & four) | (((w[1] >> 6) & two) << 4)), int(w[1] & six),
                         int((w[2] & four) | (((w[0] >> 6) & two) << 4)), int(w[0] & six));
}

// A half by F16C (the same value as fp16_to_fp32; the software one was ~10% of Q6_K's time).
JOURNEY_VNNI inline float half_f16c(const unsigned char* p) {
    uint16_t h;
    std::memcpy(&h, p, 2);
    return _cvtsh_ss(h);
}

// The exact int32 sum of 4 lanes (SSE2: both kernel families).
inline int32_t sum4_i32(__m128i v) {
    v = _mm_add_epi32(v, _mm_shuffle_epi32(v, 0x4e));
    return _mm_cvtsi128_si32(_mm_add_epi32(v, _mm_shuffle_epi32(v, 0xb1)));
}

// The exact int32 sum of 16 lanes.
JOURNEY_VNNI inline int32_t sum16_i32(__m512i v) {
    const __m256i h = _mm256_add_epi32(_mm512_maskz_extracti64x4_epi64(0xF, v, 0), _mm512_maskz_extracti64x4_epi64(0xF, v, 1));
    return sum4_i32(_mm_add_epi32(_mm256_castsi256_si128(h), _mm256_extracti128_si256(h, 1)));
}

constexpr size_t kRows16Block = 16 * 144;    // a super-block of 16 Q4_K rows (pack_rows16)
constexpr size_t kRows16BlockQ6 = 16 * 210;  // a super-block of 16 Q6_K rows

// The layout of pack_rows16 (blocks/dot.h), once: f(offset in the group's super-block, offset in
// row r's block, bytes) for each piece of that block.
template <typename F>
void rows16_pieces(int r, F&& f) {
    f(2 * r, 0, 2);       // d
    f(32 + 2 * r, 2, 2);  // dmin
    for (int j = 0; j < 3; ++j) f(64 + 64 * j + 4 * r, 4 + 4 * j, 4);  // scale words
    for (int c = 0; c < 4; ++c)
        for (int j = 0; j < 8; ++j) f(256 + 64 * (8 * c + j) + 4 * r, 16 + 32 * c + 4 * j, 4);  // quant words
}

// Q6_K's: d; the 16 scales as 4 words; then per half h and word j of its qh (q = 8h + j) the
// three words whose bits make elements 128h + 4j + {0, 32, 64, 96} .. +3: ql[64h + 4j],
// ql[64h + 32 + 4j], qh[32h + 4j].
template <typename F>
void rows16_pieces_q6(int r, F&& f) {
    f(2 * r, 208, 2);                                                    // d
    for (int v = 0; v < 4; ++v) f(32 + 64 * v + 4 * r, 192 + 4 * v, 4);  // scale words
    for (int h = 0; h < 2; ++h)
        for (int j = 0; j < 8; ++j) {
            const int at = 288 + 192 * (8 * h + j) + 4 * r;
            f(at, 64 * h + 4 * j, 4);
            f(at + 64, 64 * h + 32 + 4 * j, 4);
            f(at + 128, 128 + 32 * h + 4 * j, 4);
        }
}

template <typename F>
void rows16_pieces_of(DType t, int r, F&& f) {
    if (t == DType::Q6_K) rows16_pieces_q6(r, f);
    else rows16_pieces(r, f);
}

size_t rows16_block_bytes(DType t) { return t == DType::Q6_K ? kRows16BlockQ6 : kRows16Block; }

// Q4_K: chunk c's 64 elements are the low then the high nibbles of 32 bytes (sub-blocks 2c and
// 2c+1). Q5_K (kFive): plus bits 2c and 2c+1 of qh[32] as their fifth bits.
template <bool kFive>
JOURNEY_VNNI float dot_row_q45_k_vnni(const std::byte* row, const QuantizedActivations& x) {
    constexpr size_t block_bytes = kFive ? 176 : 144, qs_at = kFive ? 48 : 16;
    float acc = 0.0f, accm = 0.0f;
    const __m512i low4 = _mm512_set1_epi8(0x0f), five = _mm512_set1_epi8(0x10);
    for (int64_t k = 0; k < x.n / kSuper; ++k) {
        const auto* b = reinterpret_cast<const unsigned char*>(row + size_t(k) * block_bytes);
        ask_ahead<block_bytes>(b);
        const float dx = x.d[size_t(k)];
        const __m128i scm = scales_mins_k4(b + 4);
        const __m512i sc = _mm512_maskz_broadcast_i32x4(0xFFFF, _mm_cvtepu8_epi16(scm));  // scales as int16, each 16-byte lane
        const __m128i mins = _mm_cvtepu8_epi16(_mm_srli_si128(scm, 8));
        const __m128i msum = _mm_madd_epi16(mins, _mm_loadu_si128(reinterpret_cast<const __m128i*>(x.sum32.data() + 8 * k)));
        accm = std::fma(float(sum4_i32(msum)), half_f16c(b + 2) * dx, accm);
        __m512i h;
        if constexpr (kFive) h = _mm512_maskz_broadcast_i64x4(0xFF, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b + 16)));
        const int8_t* qx = x.q.data() + k * kSuper;
        __m512i isum = _mm512_setzero_si512();
#pragma GCC unroll 4
        for (int c = 0; c < 4; ++c) {
            __m512i z = _mm512_maskz_broadcast_i64x4(0xFF, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b + qs_at + 32 * c)));
            z = _mm512_mask_srli_epi16(z, 0xFFFF0000, z, 4);  // upper half: the high nibbles
            __m512i u = _mm512_and_si512(z, low4);
            if constexpr (kFive) {
                const __mmask64 m = _mm512_test_epi8_mask(h, _mm512_load_si512(kTables.bit5[c]));
                u = _mm512_mask_add_epi8(u, m, u, five);  // u < 16: adding 16 sets the bit
            }
            const __m512i p = _mm512_maddubs_epi16(u, _mm512_loadu_si512(qx + 64 * c));
            isum = _mm512_dpwssd_epi32(isum, p, _mm512_shuffle_epi8(sc, _mm512_load_si512(kTables.shuf45[c])));
        }
        acc = std::fma(float(sum16_i32(isum)), half_f16c(b) * dx, acc);
    }
    return acc - accm;
}

// Q4_K, 16 rows side by side (pack_rows16): per chunk c of 64 elements, 8 vectors of 16 rows ×
// 4 bytes; vpdpbusd takes each against 4 of x's quants broadcast, the low nibbles (sub-block
// 2c) and the high ones kept in place (16 q, sub-block 2c+1; the sum is shifted back, exactly).
// Each sub-block's sums of the 16 rows then take their scales (vpmulld), the mins their x sums
// (vpmaddwd), and the float work is one fma per super-block for 16 rows.
// N tokens at once (sequences decoded together, dot_rows_k_tokens): each vector of 16 rows'
// quants is loaded and split into nibbles once, the scales and mins unpacked once, and every
// token then takes exactly the one-token operations (the integer sums are exact, and each
// token's float steps are the same fmas in the same order), so token t's 16 outputs, stored at
// out + t · out_stride, have the bits of the token alone.
template <int N>
JOURNEY_VNNI void dot_rows16_q4_k_vnni(float* out, int64_t out_stride, const std::byte* group, const QuantizedActivations* xs) {
    __m512 acc[N], accm[N];
    for (int t = 0; t < N; ++t) acc[t] = _mm512_setzero_ps(), accm[t] = _mm512_setzero_ps();
    const __m512i lo4 = _mm512_set1_epi8(0x0f), hi4 = _mm512_set1_epi8(char(0xf0));
    const __m512i six = _mm512_set1_epi32(0x3f3f3f3f), four = _mm512_set1_epi32(0x0f0f0f0f),
                  top = _mm512_set1_epi32(0x30303030), byte0 = _mm512_set1_epi32(0xff), words = _mm512_set1_epi32(0x00ff00ff);
    // x's sums per 32 as the word pairs (Σ32_0, Σ32_2), (Σ32_1, Σ32_3), (Σ32_4, Σ32_6), (Σ32_5, Σ32_7)
    const __m128i pairs = _mm_setr_epi8(0, 1, 4, 5, 2, 3, 6, 7, 8, 9, 12, 13, 10, 11, 14, 15);
    for (int64_t k = 0; k < xs[0].n / kSuper; ++k) {
        const auto* b = reinterpret_cast<const unsigned char*>(group + size_t(k) * kRows16Block);
        // Asking for the lines kStreamAhead on, like the one-row kernels: without it (the hardware
        // prefetcher alone) Llama 3.2 1B Q4_K_M tg32 ran -t 1 at 26.6, 27.0, 30.1 tok/s against
        // 36.4, 33.2, 32.0, -t 2 34.4, 34.1, 35.2 against 39.1, 36.9, 38.7 (8 KiB into L2:
        // 32.4-35.8 and 35.8-37.1; alternating, 16:00 UTC 4 Dec).
        ask_ahead<kRows16Block>(b);
        const __m512i w0 = _mm512_loadu_si512(b + 64), w1 = _mm512_loadu_si512(b + 128), w2 = _mm512_loadu_si512(b + 192);
        const __m512i s03 = _mm512_and_si512(w0, six), m03 = _mm512_and_si512(w1, six);
        const __m512i s47 = _mm512_or_si512(_mm512_and_si512(w2, four), _mm512_and_si512(_mm512_maskz_srli_epi32(0xFFFF, w0, 2), top));
        const __m512i m47 = _mm512_or_si512(_mm512_and_si512(_mm512_maskz_srli_epi32(0xFFFF, w2, 4), four), _mm512_and_si512(_mm512_maskz_srli_epi32(0xFFFF, w1, 2), top));
        const unsigned char* qs = b + 256;
        __m512i isum[N];
        for (int t = 0; t < N; ++t) isum[t] = _mm512_setzero_si512();
#pragma GCC unroll 4
        for (int c = 0; c < 4; ++c) {
            __m512i lo[N], hi[N];
            for (int t = 0; t < N; ++t) lo[t] = _mm512_setzero_si512(), hi[t] = _mm512_setzero_si512();
#pragma GCC unroll 8
            for (int j = 0; j < 8; ++j) {
                const __m512i p = _mm512_loadu_si512(qs + 64 * (8 * c + j));
                const __m512i pl = _mm512_and_si512(p, lo4), ph = _mm512_and_si512(p, hi4);
                for (int t = 0; t < N; ++t) {
                    const int8_t* qx = xs[t].q.data() + k * kSuper;
                    int32_t xl, xh;
                    std::memcpy(&xl, qx + 64 * c + 4 * j, 4);
                    std::memcpy(&xh, qx + 64 * c + 32 + 4 * j, 4);
                    lo[t] = _mm512_dpbusd_epi32(lo[t], pl, _mm512_set1_epi32(xl));
                    hi[t] = _mm512_dpbusd_epi32(hi[t], ph, _mm512_set1_epi32(xh));
                }
            }
            const __m512i s = c < 2 ? s03 : s47;
            const int at = 16 * (c % 2);  // scale 2c is byte 2c % 4 of its word, 2c+1 the next
            const __m512i sc_lo = _mm512_and_si512(_mm512_maskz_srli_epi32(0xFFFF, s, unsigned(at)), byte0);
            const __m512i sc_hi = _mm512_and_si512(_mm512_maskz_srli_epi32(0xFFFF, s, unsigned(at + 8)), byte0);
            for (int t = 0; t < N; ++t) {
                isum[t] = _mm512_add_epi32(isum[t], _mm512_mullo_epi32(lo[t], sc_lo));
                isum[t] = _mm512_add_epi32(isum[t], _mm512_mullo_epi32(_mm512_maskz_srai_epi32(0xFFFF, hi[t], 4), sc_hi));
            }
        }
        const __m512 d = _mm512_maskz_cvtph_ps(0xFFFF, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b)));
        const __m512 dmin = _mm512_maskz_cvtph_ps(0xFFFF, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b + 32)));
        const __m512i m03_lo = _mm512_and_si512(m03, words), m03_hi = _mm512_and_si512(_mm512_maskz_srli_epi32(0xFFFF, m03, 8), words);
        const __m512i m47_lo = _mm512_and_si512(m47, words), m47_hi = _mm512_and_si512(_mm512_maskz_srli_epi32(0xFFFF, m47, 8), words);
        for (int t = 0; t < N; ++t) {
            const QuantizedActivations& x = xs[t];
            const __m128i x32 = _mm_shuffle_epi8(_mm_loadu_si128(reinterpret_cast<const __m128i*>(x.sum32.data() + 8 * k)), pairs);
            __m512i msum = _mm512_madd_epi16(m03_lo, _mm512_maskz_broadcastd_epi32(0xFFFF, x32));
            msum = _mm512_add_epi32(msum, _mm512_madd_epi16(m03_hi, _mm512_maskz_broadcastd_epi32(0xFFFF, _mm_shuffle_epi32(x32, 0x55))));
            msum = _mm512_add_epi32(msum, _mm512_madd_epi16(m47_lo, _mm512_maskz_broadcastd_epi32(0xFFFF, _mm_shuffle_epi32(x32, 0xaa))));
            msum = _mm512_add_epi32(msum, _mm512_madd_epi16(m47_hi, _mm512_maskz_broadcastd_epi32(0xFFFF, _mm_shuffle_epi32(x32, 0xff))));
            const __m512 dx = _mm512_set1_ps(x.d[size_t(k)]);
            acc[t] = _mm512_fmadd_ps(_mm512_maskz_cvtepi32_ps(0xFFFF, isum[t]), _mm512_mul_ps(d, dx), acc[t]);
            accm[t] = _mm512_fmadd_ps(_mm512_maskz_cvtepi32_ps(0xFFFF, msum), _mm512_mul_ps(dmin, dx), accm[t]);
        }
    }
    for (int t = 0; t < N; ++t) _mm512_storeu_ps(out + t * out_stride, _mm512_sub_ps(acc[t], accm[t]));
}

// Q6_K, 16 rows side by side (pack_rows16): per half h and word j, three vectors of 16 rows ×
// 4 bytes (two of ql, one of qh) make the 6-bit values of 4 elements in each of 4 sub-blocks;
// vpdpbusd takes each against 4 of x's quants broadcast. Each sub-block's 16 sums then lose 32 ·
// x's sum over it and take their scales (vpmulld), exactly dot_row_portable_q6's integer sum per
// row, and the float work is one fma per super-block for 16 rows: no sums across lanes, no scale
// permutes.
// N tokens at once (sequences decoded together, dot_rows_k_tokens): each word's three vectors are
// loaded and decoded to 6-bit values once, each sub-block's scales once, then every token takes
// the one-token operations (exact integer sums, the same fma per super-block), so token t's 16
// outputs, stored at out + t · out_stride, have the bits of the token alone.
template <int N>
JOURNEY_VNNI void dot_rows16_q6_k_vnni(float* out, int64_t out_stride, const std::byte* group, const QuantizedActivations* xs) {
    __m512 acc[N];
    for (int u = 0; u < N; ++u) acc[u] = _mm512_setzero_ps();
    const __m512i lo4 = _mm512_set1_epi8(0x0f), b45 = _mm512_set1_epi8(0x30);
    for (int64_t k = 0; k < xs[0].n / kSuper; ++k) {
        const auto* b = reinterpret_cast<const unsigned char*>(group + size_t(k) * kRows16BlockQ6);
        ask_ahead<kRows16BlockQ6>(b);
        __m512i isum[N];
        for (int u = 0; u < N; ++u) isum[u] = _mm512_setzero_si512();
#pragma GCC unroll 2
        for (int h = 0; h < 2; ++h)
#pragma GCC unroll 2
            for (int jj = 0; jj < 2; ++jj) {
                __m512i t[N][4];
                for (int u = 0; u < N; ++u)
                    for (int m = 0; m < 4; ++m) t[u][m] = _mm512_setzero_si512();
#pragma GCC unroll 4
                for (int j = 4 * jj; j < 4 * jj + 4; ++j) {
                    const unsigned char* p = b + 288 + 192 * (8 * h + j);
                    const __m512i A = _mm512_loadu_si512(p), B = _mm512_loadu_si512(p + 64), H = _mm512_loadu_si512(p + 128);
                    const __m512i e0 = _mm512_ternarylogic_epi32(_mm512_and_si512(A, lo4), _mm512_maskz_slli_epi32(0xFFFF, H, 4), b45, 0xF8);
                    const __m512i e1 = _mm512_ternarylogic_epi32(_mm512_and_si512(B, lo4), _mm512_maskz_slli_epi32(0xFFFF, H, 2), b45, 0xF8);
                    const __m512i e2 = _mm512_ternarylogic_epi32(_mm512_and_si512(_mm512_maskz_srli_epi32(0xFFFF, A, 4), lo4), H, b45, 0xF8);
                    const __m512i e3 = _mm512_ternarylogic_epi32(_mm512_and_si512(_mm512_maskz_srli_epi32(0xFFFF, B, 4), lo4),
                                                                 _mm512_maskz_srli_epi32(0xFFFF, H, 2), b45, 0xF8);
                    for (int u = 0; u < N; ++u) {
                        const int8_t* xo = xs[u].q.data() + k * kSuper + 128 * h + 4 * j;
                        int32_t x0, x1, x2, x3;
                        std::memcpy(&x0, xo, 4);
                        std::memcpy(&x1, xo + 32, 4);
                        std::memcpy(&x2, xo + 64, 4);
                        std::memcpy(&x3, xo + 96, 4);
                        t[u][0] = _mm512_dpbusd_epi32(t[u][0], e0, _mm512_set1_epi32(x0));
                        t[u][1] = _mm512_dpbusd_epi32(t[u][1], e1, _mm512_set1_epi32(x1));
                        t[u][2] = _mm512_dpbusd_epi32(t[u][2], e2, _mm512_set1_epi32(x2));
                        t[u][3] = _mm512_dpbusd_epi32(t[u][3], e3, _mm512_set1_epi32(x3));
                    }
                }
                for (int m = 0; m < 4; ++m) {  // sub-block s: elements 16s .. 16s+15
                    const int s = 8 * h + jj + 2 * m;
                    const __m512i sc = _mm512_loadu_si512(b + 32 + 64 * (s / 4));
                    const __m512i scale = _mm512_maskz_srai_epi32(0xFFFF, _mm512_maskz_slli_epi32(0xFFFF, sc, unsigned(24 - 8 * (s % 4))), 24);
                    for (int u = 0; u < N; ++u) {
                        const __m512i d = _mm512_sub_epi32(t[u][m], _mm512_set1_epi32(32 * int32_t(xs[u].sum16[size_t(k * 16 + s)])));
                        isum[u] = _mm512_add_epi32(isum[u], _mm512_mullo_epi32(d, scale));
                    }
                }
            }
        const __m512 d = _mm512_maskz_cvtph_ps(0xFFFF, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b)));
        for (int u = 0; u < N; ++u)
            acc[u] = _mm512_fmadd_ps(_mm512_maskz_cvtepi32_ps(0xFFFF, isum[u]), _mm512_mul_ps(d, _mm512_set1_ps(xs[u].d[size_t(k)])), acc[u]);
    }
    for (int u = 0; u < N; ++u) _mm512_storeu_ps(out + u * out_stride, acc[u]);
}

// Q6_K: half h of the super-block (elements 128h .. 128h+127) is ql[64h .. 64h+63], low nibbles
// for elements 0-63 and high nibbles for 64-127 of it, with two bits each from qh[32h .. 32h+31]
// (bits 0-1 / 2-3 for the low nibbles of bytes 0-31 / 32-63, bits 4-5 / 6-7 for the high).
JOURNEY_VNNI float dot_row_q6_k_vnni(const std::byte* row, const QuantizedActivations& x) {
    float acc = 0.0f;
    const __m512i low4 = _mm512_set1_epi8(0x0f), bits45 = _mm512_set1_epi8(0x30);
    for (int64_t k = 0; k < x.n / kSuper; ++k) {
        const auto* b = reinterpret_cast<const unsigned char*>(row + size_t(k) * 210);
        ask_ahead<210>(b);
        const __m256i sc16 = _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(b + 192)));
        const __m512i sc = _mm512_maskz_broadcast_i64x4(0xFF, sc16);  // vpermw reads the low 16
        const __m256i bias = _mm256_slli_epi32(
            _mm256_madd_epi16(sc16, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x.sum16.data() + 16 * k))), 5);
        __m512i isum = _mm512_maskz_sub_epi32(0x00FF, _mm512_setzero_si512(), _mm512_maskz_broadcast_i64x4(0xFF, bias));
        const int8_t* qx = x.q.data() + k * kSuper;
#pragma GCC unroll 2
        for (int h = 0; h < 2; ++h) {
            const __m512i ql = _mm512_loadu_si512(b + 64 * h);
            __m512i qh = _mm512_maskz_broadcast_i64x4(0xFF, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b + 128 + 32 * h)));
            qh = _mm512_mask_srli_epi16(qh, 0xFFFF0000, qh, 2);  // upper half: bits 2-3 and 6-7 down
            const __m512i lo = _mm512_or_si512(_mm512_and_si512(ql, low4), _mm512_and_si512(_mm512_slli_epi16(qh, 4), bits45));
            const __m512i hi = _mm512_or_si512(_mm512_and_si512(_mm512_srli_epi16(ql, 4), low4), _mm512_and_si512(qh, bits45));
            const __m512i plo = _mm512_maddubs_epi16(lo, _mm512_loadu_si512(qx + 128 * h));
            const __m512i phi = _mm512_maddubs_epi16(hi, _mm512_loadu_si512(qx + 128 * h + 64));
            isum = _mm512_dpwssd_epi32(isum, plo, _mm512_permutexvar_epi16(_mm512_load_si512(kTables.perm6[2 * h]), sc));
            isum = _mm512_dpwssd_epi32(isum, phi, _mm512_permutexvar_epi16(_mm512_load_si512(kTables.perm6[2 * h + 1]), sc));
        }
        acc = std::fma(float(sum16_i32(isum)), half_f16c(b + 208) * x.d[size_t(k)], acc);
    }
    return acc;
}

// Q6_K, one row against N tokens (dot_rows_k_tokens): each half's quants are unpacked and the
// scales permuted once, then every token takes dot_row_q6_k_vnni's operations (exact integer
// sums, the same fma per super-block), so out[t · out_stride] has the bits of the token alone.
template <int N>
JOURNEY_VNNI void dot_row_q6_k_tokens_vnni(float* out, int64_t out_stride, const std::byte* row, const QuantizedActivations* xs,
                                           bool ask) {
    float acc[N];
    for (int t = 0; t < N; ++t) acc[t] = 0.0f;
    const __m512i low4 = _mm512_set1_epi8(0x0f), bits45 = _mm512_set1_epi8(0x30);
    for (int64_t k = 0; k < xs[0].n / kSuper; ++k) {
        const auto* b = reinterpret_cast<const unsigned char*>(row + size_t(k) * 210);
        if (ask) ask_ahead<210>(b);
        const __m256i sc16 = _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(b + 192)));
        const __m512i sc = _mm512_maskz_broadcast_i64x4(0xFF, sc16);  // vpermw reads the low 16
        __m512i isum[N];
        for (int t = 0; t < N; ++t) {
            const __m256i bias = _mm256_slli_epi32(
                _mm256_madd_epi16(sc16, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(xs[t].sum16.data() + 16 * k))), 5);
            isum[t] = _mm512_maskz_sub_epi32(0x00FF, _mm512_setzero_si512(), _mm512_maskz_broadcast_i64x4(0xFF, bias));
        }
#pragma GCC unroll 2
        for (int h = 0; h < 2; ++h) {
            const __m512i ql = _mm512_loadu_si512(b + 64 * h);
            __m512i qh = _mm512_maskz_broadcast_i64x4(0xFF, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b + 128 + 32 * h)));
            qh = _mm512_mask_srli_epi16(qh, 0xFFFF0000, qh, 2);  // upper half: bits 2-3 and 6-7 down
            const __m512i lo = _mm512_or_si512(_mm512_and_si512(ql, low4), _mm512_and_si512(_mm512_slli_epi16(qh, 4), bits45));
            const __m512i hi = _mm512_or_si512(_mm512_and_si512(_mm512_srli_epi16(ql, 4), low4), _mm512_and_si512(qh, bits45));
            const __m512i slo = _mm512_permutexvar_epi16(_mm512_load_si512(kTables.perm6[2 * h]), sc);
            const __m512i shi = _mm512_permutexvar_epi16(_mm512_load_si512(kTables.perm6[2 * h + 1]), sc);
            for (int t = 0; t < N; ++t) {
                const int8_t* qx = xs[t].q.data() + k * kSuper;
                isum[t] = _mm512_dpwssd_epi32(isum[t], _mm512_maddubs_epi16(lo, _mm512_loadu_si512(qx + 128 * h)), slo);
                isum[t] = _mm512_dpwssd_epi32(isum[t], _mm512_maddubs_epi16(hi, _mm512_loadu_si512(qx + 128 * h + 64)), shi);
            }
        }
        const float d = half_f16c(b + 208);
        for (int t = 0; t < N; ++t) acc[t] = std::fma(float(sum16_i32(isum[t])), d * xs[t].d[size_t(k)], acc[t]);
    }
    for (int t = 0; t < N; ++t) out[t * out_stride] = acc[t];
}

// ---- AVX2 (AVX2, FMA, F16C: CPUs without AVX-512 VNNI) --------------------------------------
// The portable loop's exact integer sums, 32 elements a vector: the weights as unsigned bytes
// (Q4_K 0..15, Q5_K 0..31, Q6_K q + 32 = 0..63) times x's int8 quants (Q8_K: -127..127) by
// vpmaddubsw, whose int16 pair sums stay below its saturation (2 · 63 · 127 = 16002 < 32767),
// then vpmaddwd with the sub-block's scale (int16) into 8 int32 lanes (|isum| < 2^29: no
// overflow). Integer sums are exact in any grouping, so the 8 lanes' total is the portable isum
// (and msum), and the float step per super-block is the portable one, the same scalar fma: the
// same bits. (The approach of ggml's AVX2 ggml_vec_dot_q4_K_q8_K / q6_K.) One row at a time,
// as stored, asking ahead as the VNNI rows do (no prefetch, or 8 KiB on into L2, measured within
// the noise here). Llama 3.2 1B Q4_K_M (generated weights), journey bench -p 0 -n 16 -t 1, CPU
// time, alternating with the portable loops on this AMD EPYC without AVX-512 (under others'
// builds, 11:29 UTC 7 Dec 2026): 3.55, 3.65, 3.57 -> 14.2, 10.6, 13.8 tok/s.

// Q4_K/Q5_K sub-block s's scale (int16 s of 8, in both 16-byte lanes) broadcast by vpshufb.
struct TablesAvx2 {
    alignas(32) uint8_t pick16[8][32];  // bytes 2s, 2s+1 repeated
    // Q6_K vector j of a half: int16 2j in the low 16-byte lane (sub-block 2j: elements 0-15),
    // 2j+1 in the high one (elements 16-31)
    alignas(32) uint8_t pick6[4][32];
    constexpr TablesAvx2() : pick16(), pick6() {
        for (int s = 0; s < 8; ++s)
            for (int i = 0; i < 32; ++i) pick16[s][i] = uint8_t(2 * s + i % 2);
        for (int j = 0; j < 4; ++j)
            for (int i = 0; i < 32; ++i) pick6[j][i] = uint8_t(2 * (2 * j + i / 16) + i % 2);
    }
};
constexpr TablesAvx2 kTablesAvx2;

JOURNEY_AVX2 inline float half_avx2(const unsigned char* p) {
    uint16_t h;
    std::memcpy(&h, p, 2);
    return _cvtsh_ss(h);  // exactly fp16_to_fp32
}

// The exact int32 sum of 8 lanes.
JOURNEY_AVX2 inline int32_t sum8_i32(__m256i v) {
    return sum4_i32(_mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1)));
}

// Q4_K, and Q5_K (kFive). Chunk c's 32 bytes of nibbles: the low ones are sub-block 2c, the high
// ones 2c+1; Q5_K's fifth bits are bits 2c, 2c+1 of qh[32] (vpsrlw by 2c brings them to bits 0
// and 1 of each byte; what crosses in from the next byte lands above them and is masked off).
template <bool kFive>
JOURNEY_AVX2 float dot_row_q45_k_avx2(const std::byte* row, const QuantizedActivations& x) {
    constexpr size_t block_bytes = kFive ? 176 : 144, qs_at = kFive ? 48 : 16;
    float acc = 0.0f, accm = 0.0f;
    const __m256i low4 = _mm256_set1_epi8(0x0f), five = _mm256_set1_epi8(0x10);
    for (int64_t k = 0; k < x.n / kSuper; ++k) {
        const auto* b = reinterpret_cast<const unsigned char*>(row + size_t(k) * block_bytes);
        ask_ahead<block_bytes>(b);
        const float dx = x.d[size_t(k)];
        const __m128i scm = scales_mins_k4(b + 4);
        const __m256i sc = _mm256_broadcastsi128_si256(_mm_cvtepu8_epi16(scm));  // 8 int16 scales, both lanes
        const __m128i mins = _mm_cvtepu8_epi16(_mm_srli_si128(scm, 8));
        const __m128i msum = _mm_madd_epi16(mins, _mm_loadu_si128(reinterpret_cast<const __m128i*>(x.sum32.data() + 8 * k)));
        accm = std::fma(float(sum4_i32(msum)), half_avx2(b + 2) * dx, accm);
        __m256i h = _mm256_setzero_si256();
        if constexpr (kFive) h = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b + 16));
        const int8_t* qx = x.q.data() + k * kSuper;
        __m256i isum = _mm256_setzero_si256();
#pragma GCC unroll 4
        for (int c = 0; c < 4; ++c) {
            const __m256i q = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b + qs_at + 32 * c));
            __m256i lo = _mm256_and_si256(q, low4), hi = _mm256_and_si256(_mm256_srli_epi16(q, 4), low4);
            if constexpr (kFive) {
                const __m256i hc = _mm256_srli_epi16(h, 2 * c);  // bits 2c, 2c+1 of each byte at 0, 1
                lo = _mm256_or_si256(lo, _mm256_and_si256(_mm256_slli_epi16(hc, 4), five));
                hi = _mm256_or_si256(hi, _mm256_and_si256(_mm256_slli_epi16(hc, 3), five));
            }
            const __m256i plo = _mm256_maddubs_epi16(lo, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(qx + 64 * c)));
            const __m256i phi = _mm256_maddubs_epi16(hi, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(qx + 64 * c + 32)));
            const __m256i slo = _mm256_shuffle_epi8(sc, _mm256_load_si256(reinterpret_cast<const __m256i*>(kTablesAvx2.pick16[2 * c])));
            const __m256i shi = _mm256_shuffle_epi8(sc, _mm256_load_si256(reinterpret_cast<const __m256i*>(kTablesAvx2.pick16[2 * c + 1])));
            isum = _mm256_add_epi32(isum, _mm256_add_epi32(_mm256_madd_epi16(plo, slo), _mm256_madd_epi16(phi, shi)));
        }
        acc = std::fma(float(sum8_i32(isum)), half_avx2(b) * dx, acc);
    }
    return acc - accm;
}

// Q6_K: half h (elements 128h .. 128h+127) from ql[64h ..] and qh[32h ..] as unpack_q6_k reads
// them, four vectors of 32: ql bytes 0-31 / 32-63, low / high nibbles, with qh's bits 0-1 / 2-3
// / 4-5 / 6-7 as bits 4-5 (vpsllw / vpsrlw move the pairs within each byte; what crosses from
// the neighbouring byte is masked off). Vector j holds sub-blocks 8h + 2j and 8h + 2j + 1 (its
// two 16-byte lanes). The -32 of each quant comes out once, as portable does per sub-block: the
// lanes start at -32 · Σ_s sc_s · Σ16_s (exact).
JOURNEY_AVX2 float dot_row_q6_k_avx2(const std::byte* row, const QuantizedActivations& x) {
    float acc = 0.0f;
    const __m256i low4 = _mm256_set1_epi8(0x0f), bits45 = _mm256_set1_epi8(0x30);
    for (int64_t k = 0; k < x.n / kSuper; ++k) {
        const auto* b = reinterpret_cast<const unsigned char*>(row + size_t(k) * 210);
        ask_ahead<210>(b);
        const __m128i sc8 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(b + 192));
        const __m256i bias = _mm256_madd_epi16(_mm256_cvtepi8_epi16(sc8), _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x.sum16.data() + 16 * k)));
        __m256i isum = _mm256_sub_epi32(_mm256_setzero_si256(), _mm256_slli_epi32(bias, 5));
        const int8_t* qx = x.q.data() + k * kSuper;
#pragma GCC unroll 2
        for (int h = 0; h < 2; ++h) {
            // the half's 8 scales as int16, in both 16-byte lanes
            const __m256i sc = _mm256_broadcastsi128_si256(_mm_cvtepi8_epi16(h == 0 ? sc8 : _mm_srli_si128(sc8, 8)));
            const __m256i ql0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b + 64 * h));
            const __m256i ql1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b + 64 * h + 32));
            const __m256i qh = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b + 128 + 32 * h));
            const __m256i q[4] = {
                _mm256_or_si256(_mm256_and_si256(ql0, low4), _mm256_and_si256(_mm256_slli_epi16(qh, 4), bits45)),
                _mm256_or_si256(_mm256_and_si256(ql1, low4), _mm256_and_si256(_mm256_slli_epi16(qh, 2), bits45)),
                _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(ql0, 4), low4), _mm256_and_si256(qh, bits45)),
                _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(ql1, 4), low4), _mm256_and_si256(_mm256_srli_epi16(qh, 2), bits45)),
            };
#pragma GCC unroll 4
            for (int j = 0; j < 4; ++j) {
                const __m256i p = _mm256_maddubs_epi16(q[j], _mm256_loadu_si256(reinterpret_cast<const __m256i*>(qx + 128 * h + 32 * j)));
                const __m256i s = _mm256_shuffle_epi8(sc, _mm256_load_si256(reinterpret_cast<const __m256i*>(kTablesAvx2.pick6[j])));
                isum = _mm256_add_epi32(isum, _mm256_madd_epi16(p, s));
            }
        }
        acc = std::fma(float(sum8_i32(isum)), half_avx2(b + 208) * x.d[size_t(k)], acc);
    }
    return acc;
}


// ---- AVX2, several tokens (dot_rows_k_tokens on rows as stored) ------------------------------
// Prompts and --parallel decoding take T tokens against the same rows. The one-token kernels
// above, called per token, decode each super-block again for every token (nibbles split, the
// 6-bit scales and mins unpacked, the scale vectors shuffled); here one row's super-block is
// decoded once and applied to N tokens' Q8_K quants (N = 8, then 4, 2, 1: 8 int32 accumulators
// plus a chunk's 4 decoded vectors still fit AVX2's 16 registers). Per (row, token) these are exactly the
// one-token kernel's operations: the same vpmaddubsw/vpmaddwd products (exact integer sums, in
// any grouping, |isum| < 2^29), then the same scalar float steps in the same order per super-
// block (accm's fma, then acc's fma; acc - accm at the end; Q6_K's one fma), so out[t · stride]
// has the bits of dot_row_q45_k_avx2 / dot_row_q6_k_avx2 on token t alone (and so of the
// portable loop). Only the first token group asks ahead (the others find the row in cache).
// Llama 3.2 1B Q4_K_M (generated weights), journey bench -p 64 -n 0 -r 1 -t 1, pp CPU time,
// alternating with the per-token dot_rows fallback on this AMD EPYC without AVX-512, under a CI
// run (12:14 UTC 7 Dec 2026): 19.2, 19.1 -> 26.8, 28.8 tok/s (34.0 in a quieter moment) with
// N = 4 at most; 8 tokens at once against 4 (12:19, alternating): 32.6, 28.0, 29.6, 26.4 against
// 30.3, 24.8, 29.0, 27.2 (old: 16.1, 17.1): about 5%, near the noise, kept.
template <bool kFive, int N>
JOURNEY_AVX2 void dot_row_q45_k_tokens_avx2(float* out, int64_t out_stride, const std::byte* row, const QuantizedActivations* xs,
                                            bool ask) {
    constexpr size_t block_bytes = kFive ? 176 : 144, qs_at = kFive ? 48 : 16;
    float acc[N], accm[N];
    for (int t = 0; t < N; ++t) acc[t] = accm[t] = 0.0f;
    const __m256i low4 = _mm256_set1_epi8(0x0f), five = _mm256_set1_epi8(0x10);
    for (int64_t k = 0; k < xs[0].n / kSuper; ++k) {
        const auto* b = reinterpret_cast<const unsigned char*>(row + size_t(k) * block_bytes);
        if (ask) ask_ahead<block_bytes>(b);
        const __m128i scm = scales_mins_k4(b + 4);
        const __m256i sc = _mm256_broadcastsi128_si256(_mm_cvtepu8_epi16(scm));
        const __m128i mins = _mm_cvtepu8_epi16(_mm_srli_si128(scm, 8));
        const float dmin = half_avx2(b + 2), d = half_avx2(b);
        for (int t = 0; t < N; ++t) {
            const __m128i msum = _mm_madd_epi16(mins, _mm_loadu_si128(reinterpret_cast<const __m128i*>(xs[t].sum32.data() + 8 * k)));
            accm[t] = std::fma(float(sum4_i32(msum)), dmin * xs[t].d[size_t(k)], accm[t]);
        }
        __m256i h = _mm256_setzero_si256();
        if constexpr (kFive) h = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b + 16));
        __m256i isum[N];
        for (int t = 0; t < N; ++t) isum[t] = _mm256_setzero_si256();
#pragma GCC unroll 4
        for (int c = 0; c < 4; ++c) {
            const __m256i q = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b + qs_at + 32 * c));
            __m256i lo = _mm256_and_si256(q, low4), hi = _mm256_and_si256(_mm256_srli_epi16(q, 4), low4);
            if constexpr (kFive) {
                const __m256i hc = _mm256_srli_epi16(h, 2 * c);
                lo = _mm256_or_si256(lo, _mm256_and_si256(_mm256_slli_epi16(hc, 4), five));
                hi = _mm256_or_si256(hi, _mm256_and_si256(_mm256_slli_epi16(hc, 3), five));
            }
            const __m256i slo = _mm256_shuffle_epi8(sc, _mm256_load_si256(reinterpret_cast<const __m256i*>(kTablesAvx2.pick16[2 * c])));
            const __m256i shi = _mm256_shuffle_epi8(sc, _mm256_load_si256(reinterpret_cast<const __m256i*>(kTablesAvx2.pick16[2 * c + 1])));
            for (int t = 0; t < N; ++t) {
                const int8_t* qx = xs[t].q.data() + k * kSuper + 64 * c;
                const __m256i plo = _mm256_maddubs_epi16(lo, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(qx)));
                const __m256i phi = _mm256_maddubs_epi16(hi, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(qx + 32)));
                isum[t] = _mm256_add_epi32(isum[t], _mm256_add_epi32(_mm256_madd_epi16(plo, slo), _mm256_madd_epi16(phi, shi)));
            }
        }
        for (int t = 0; t < N; ++t) acc[t] = std::fma(float(sum8_i32(isum[t])), d * xs[t].d[size_t(k)], acc[t]);
    }
    for (int t = 0; t < N; ++t) out[t * out_stride] = acc[t] - accm[t];
}

// Q6_K: each half's four vectors of quants and four scale vectors decoded once (as
// dot_row_q6_k_avx2 does), then every token's products; each token's lanes start at its own
// -32 · Σ_s sc_s · Σ16_s.
template <int N>
JOURNEY_AVX2 void dot_row_q6_k_tokens_avx2(float* out, int64_t out_stride, const std::byte* row, const QuantizedActivations* xs,
                                           bool ask) {
    float acc[N];
    for (int t = 0; t < N; ++t) acc[t] = 0.0f;
    const __m256i low4 = _mm256_set1_epi8(0x0f), bits45 = _mm256_set1_epi8(0x30);
    for (int64_t k = 0; k < xs[0].n / kSuper; ++k) {
        const auto* b = reinterpret_cast<const unsigned char*>(row + size_t(k) * 210);
        if (ask) ask_ahead<210>(b);
        const __m128i sc8 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(b + 192));
        const __m256i sc16 = _mm256_cvtepi8_epi16(sc8);
        __m256i isum[N];
        for (int t = 0; t < N; ++t) {
            const __m256i bias = _mm256_madd_epi16(sc16, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(xs[t].sum16.data() + 16 * k)));
            isum[t] = _mm256_sub_epi32(_mm256_setzero_si256(), _mm256_slli_epi32(bias, 5));
        }
#pragma GCC unroll 2
        for (int h = 0; h < 2; ++h) {
            const __m256i sc = _mm256_broadcastsi128_si256(_mm_cvtepi8_epi16(h == 0 ? sc8 : _mm_srli_si128(sc8, 8)));
            const __m256i ql0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b + 64 * h));
            const __m256i ql1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b + 64 * h + 32));
            const __m256i qh = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b + 128 + 32 * h));
#pragma GCC unroll 4
            for (int j = 0; j < 4; ++j) {
                __m256i q;
                switch (j) {
                    case 0: q = _mm256_or_si256(_mm256_and_si256(ql0, low4), _mm256_and_si256(_mm256_slli_epi16(qh, 4), bits45)); break;
                    case 1: q = _mm256_or_si256(_mm256_and_si256(ql1, low4), _mm256_and_si256(_mm256_slli_epi16(qh, 2), bits45)); break;
                    case 2: q = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(ql0, 4), low4), _mm256_and_si256(qh, bits45)); break;
                    default: q = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(ql1, 4), low4), _mm256_and_si256(_mm256_srli_epi16(qh, 2), bits45)); break;
                }
                const __m256i s = _mm256_shuffle_epi8(sc, _mm256_load_si256(reinterpret_cast<const __m256i*>(kTablesAvx2.pick6[j])));
                for (int t = 0; t < N; ++t) {
                    const __m256i p = _mm256_maddubs_epi16(
                        q, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(xs[t].q.data() + k * kSuper + 128 * h + 32 * j)));
                    isum[t] = _mm256_add_epi32(isum[t], _mm256_madd_epi16(p, s));
                }
            }
        }
        const float d = half_avx2(b + 208);
        for (int t = 0; t < N; ++t) acc[t] = std::fma(float(sum8_i32(isum[t])), d * xs[t].d[size_t(k)], acc[t]);
    }
    for (int t = 0; t < N; ++t) out[t * out_stride] = acc[t];
}

// One row against tokens t .. t+N-1 of T.
template <DType D, int N>
JOURNEY_AVX2 void row_tokens_avx2(float* out, int64_t out_stride, const std::byte* row, const QuantizedActivations* xs, bool ask) {
    if constexpr (D == DType::Q6_K) dot_row_q6_k_tokens_avx2<N>(out, out_stride, row, xs, ask);
    else dot_row_q45_k_tokens_avx2<D == DType::Q5_K, N>(out, out_stride, row, xs, ask);
}

// T tokens on rows as stored: groups of rows of about 32 KiB (from cache after the first token
// group, which alone asks ahead), each group taken by 8 tokens at a time, then 4, 2, 1.
template <DType D>
JOURNEY_AVX2 void dot_rows_k_tokens_avx2(float* out, int64_t out_stride, const Matrix& W, const QuantizedActivations* xs, int T,
                                         int64_t r0, int64_t r1) {
    const size_t row_bytes = dtype_bytes(W.dtype, uint64_t(W.cols));
    const int64_t group = std::max<int64_t>(1, int64_t(kTokensGroupBytes / row_bytes));
    for (int64_t g = r0; g < r1; g += group) {
        const int64_t g1 = std::min(r1, g + group);
        int t = 0;
        for (; t + 8 <= T; t += 8)
            for (int64_t r = g; r < g1; ++r)
                row_tokens_avx2<D, 8>(out + t * out_stride + r, out_stride, W.data + size_t(r) * row_bytes, xs + t, t == 0);
        for (; t + 4 <= T; t += 4)
            for (int64_t r = g; r < g1; ++r)
                row_tokens_avx2<D, 4>(out + t * out_stride + r, out_stride, W.data + size_t(r) * row_bytes, xs + t, t == 0);
        for (; t + 2 <= T; t += 2)
            for (int64_t r = g; r < g1; ++r)
                row_tokens_avx2<D, 2>(out + t * out_stride + r, out_stride, W.data + size_t(r) * row_bytes, xs + t, t == 0);
        for (; t < T; ++t)
            for (int64_t r = g; r < g1; ++r)
                row_tokens_avx2<D, 1>(out + t * out_stride + r, out_stride, W.data + size_t(r) * row_bytes, xs + t, t == 0);
    }
}


// ---- AVX2, rows regrouped 16 at a time (pack_rows16) -----------------------------------------
// The VNNI kernels' layout (pack_rows16), read as two halves of 8 rows: a 64-byte line of 16 rows
// × 4 bytes is two vectors of 8 rows, each int32 lane one row. vpdpbusd becomes vpmaddubsw (each
// row's 4 quants against 4 of x's broadcast: two int16 pair sums a lane), summed in int16 over a
// sub-block's words, then vpmaddwd with the row's sub-block scale in both int16 halves of its
// lane: the row's exact Σ sc · Σ q · qx in int32, as the portable loop's. No int16 sum can
// saturate or wrap: Q4_K 8 words of a sub-block of 32, 2 · 8 · 15 · 127 = 30480; Q6_K two words
// at a time, 2 · 2 · 63 · 127 = 32004 (< 32767; x's quants are -127..127, blocks/dot.h). The
// float work is then the portable loop's scalar steps lane-wise (acc = fma(float(isum), d · d_x,
// acc), accm the same with dmin; F16C's halves are fp16_to_fp32's values): the same bits per row,
// with no sums across lanes and no scale shuffles per row. N tokens at once (dot_rows_k_tokens:
// prompts, --parallel): each vector of weights is loaded and split into nibbles (6-bit values)
// once, each scale vector made once, then every token takes the one-token operations.
// One core, ns per super-block of a row, 2048 columns (a test program, 64 rows in cache / 256 MB
// streamed, alternating with the rows as stored, this AMD EPYC Zen 3 without AVX-512, 22:00-22:03
// UTC 7 Dec 2026, load 7-9): Q4_K 16.5 -> 7.2-7.6 in cache, 13.5-18.4 -> 14.0-15.2 streamed;
// Q6_K 13.9-14.8 -> 10.7-11.7, 17.1-21.2 -> 19.3-22.0. Generation there is bound by memory
// (two threads ~17-20 GB/s): the Qwen3-30B-A3B shape's tg32 did not gain (Q4_K regrouped: 37.7,
// 34.7, 34.5, 37.8 tok/s against 37.5, 37.3, 38.4, 37.0 as stored) and lost ~12% with Q6_K
// regrouped too, so weights.cpp regroups Q4_K alone on AVX2; prompts gain (Llama 3.2 1B Q4_K_M
// pp512 -t 2: 61.2, 57.6 -> 85.3, 74.2 tok/s; the MoE shape's 169 -> 220, 248; 22:35-22:38 UTC).

// Byte tables: byte p of each 32-bit lane zero-extended into both of its int16 halves
// (Q4_K/Q5_K's unsigned 6-bit scales: index 0x80 gives a zero byte); int16 w of each lane in both
// halves (Q6_K's sign-extended scales).
struct TablesRows16Avx2 {
    alignas(32) uint8_t byte_pair[4][32];
    alignas(32) uint8_t word_pair[2][32];
    constexpr TablesRows16Avx2() : byte_pair(), word_pair() {
        for (int i = 0; i < 32; ++i) {
            const int base = i % 16 / 4 * 4;
            for (int p = 0; p < 4; ++p) byte_pair[p][i] = i % 2 == 0 ? uint8_t(base + p) : uint8_t(0x80);
            for (int w = 0; w < 2; ++w) word_pair[w][i] = uint8_t(base + 2 * w + i % 2);
        }
    }
};
constexpr TablesRows16Avx2 kRows16Avx2;

// The lines of a group's super-block kRows16AheadAvx2 bytes on (ask_ahead's, further: a group's
// super-block takes less time than 16 rows' blocks did, so the lines must be asked for earlier).
constexpr size_t kRows16AheadAvx2 = 8192;
template <size_t kBytes>
inline void ask_rows16_ahead(const unsigned char* b) {
    for (size_t o = 0; o < kBytes; o += 64) __builtin_prefetch(b + kRows16AheadAvx2 + o, 0, 3);
}

// Two int16 a, b as one int32 lane (a low), broadcast.
JOURNEY_AVX2 inline __m256i pair16(int16_t a, int16_t b) { return _mm256_set1_epi32(int32_t(uint32_t(uint16_t(a)) | uint32_t(uint16_t(b)) << 16)); }

JOURNEY_AVX2 inline __m256i load32(const unsigned char* p) { return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)); }

JOURNEY_AVX2 inline __m256i bcast4(const int8_t* p) {
    int32_t v;
    std::memcpy(&v, p, 4);
    return _mm256_set1_epi32(v);
}

// Q4_K: the two halves of 8 rows side by side (h = 0, 1: rows 8h .. 8h+7, bytes 32h .. 32h+31
// of each 64), the scale words as dot_rows16_q4_k_vnni reads them; per chunk c of 64 elements
// its 8 words j: the low nibbles (sub-block 2c, elements 4j .. 4j+3 of it) against x's 4 quants
// there, the high ones (2c+1) against theirs. One token takes both nibbles of a word at once;
// several take the low ones of a chunk, then the high ones (fewer int16 sums in registers).
template <int N>
JOURNEY_AVX2 void dot_rows16_q4_k_avx2(float* out, int64_t out_stride, const std::byte* group, const QuantizedActivations* xs) {
    constexpr int P = N == 1 ? 2 : 1;  // nibble parts a pass
    __m256 acc[2][N], accm[2][N];
    for (int h = 0; h < 2; ++h)
        for (int t = 0; t < N; ++t) acc[h][t] = _mm256_setzero_ps(), accm[h][t] = _mm256_setzero_ps();
    const __m256i lo4 = _mm256_set1_epi8(0x0f), six = _mm256_set1_epi8(0x3f), top = _mm256_set1_epi8(0x30),
                  words = _mm256_set1_epi32(0x00ff00ff);
    for (int64_t k = 0; k < xs[0].n / kSuper; ++k) {
        const auto* b = reinterpret_cast<const unsigned char*>(group + size_t(k) * kRows16Block);
        ask_rows16_ahead<kRows16Block>(b);
        const unsigned char* qs = b + 256;
        __m256i isum[2][N];
        for (int h = 0; h < 2; ++h)
            for (int t = 0; t < N; ++t) isum[h][t] = _mm256_setzero_si256();
#pragma GCC unroll 1
        for (int c = 0; c < 4; ++c)
#pragma GCC unroll 1
            for (int part = 0; part < 2; part += P) {
                __m256i a[P][2][N];
                for (int e = 0; e < P; ++e)
                    for (int h = 0; h < 2; ++h)
                        for (int t = 0; t < N; ++t) a[e][h][t] = _mm256_setzero_si256();
#pragma GCC unroll 8
                for (int j = 0; j < 8; ++j) {
                    __m256i v[P][2];
                    for (int h = 0; h < 2; ++h) {
                        const __m256i p = load32(qs + 64 * (8 * c + j) + 32 * h);
                        for (int e = 0; e < P; ++e)
                            v[e][h] = part + e == 0 ? _mm256_and_si256(p, lo4) : _mm256_and_si256(_mm256_srli_epi16(p, 4), lo4);
                    }
                    for (int t = 0; t < N; ++t)
                        for (int e = 0; e < P; ++e) {
                            const __m256i xv = bcast4(xs[t].q.data() + k * kSuper + 64 * c + 32 * (part + e) + 4 * j);
                            for (int h = 0; h < 2; ++h) a[e][h][t] = _mm256_add_epi16(a[e][h][t], _mm256_maddubs_epi16(v[e][h], xv));
                        }
                }
                // sub-block 2c + part + e's scale: byte (2c + part + e) % 4 of word 0 (c < 2) or of s47's
                for (int h = 0; h < 2; ++h) {
                    const __m256i w0 = load32(b + 64 + 32 * h);
                    const __m256i s = c < 2 ? _mm256_and_si256(w0, six)
                                            : _mm256_or_si256(_mm256_and_si256(load32(b + 192 + 32 * h), lo4),
                                                              _mm256_and_si256(_mm256_srli_epi32(w0, 2), top));
                    for (int e = 0; e < P; ++e) {
                        const __m256i sc = _mm256_shuffle_epi8(s, load32(kRows16Avx2.byte_pair[(2 * c + part + e) % 4]));
                        for (int t = 0; t < N; ++t) isum[h][t] = _mm256_add_epi32(isum[h][t], _mm256_madd_epi16(a[e][h][t], sc));
                    }
                }
            }
        for (int h = 0; h < 2; ++h) {
            const __m256i w1 = load32(b + 128 + 32 * h), w2 = load32(b + 192 + 32 * h);
            const __m256i m03 = _mm256_and_si256(w1, six);
            const __m256i m47 = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi32(w2, 4), lo4), _mm256_and_si256(_mm256_srli_epi32(w1, 2), top));
            // mins: int16 pairs (m0, m2), (m1, m3), (m4, m6), (m5, m7) against x's sums per 32
            const __m256i m03_lo = _mm256_and_si256(m03, words), m03_hi = _mm256_and_si256(_mm256_srli_epi32(m03, 8), words);
            const __m256i m47_lo = _mm256_and_si256(m47, words), m47_hi = _mm256_and_si256(_mm256_srli_epi32(m47, 8), words);
            const __m256 d = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(b + 16 * h)));
            const __m256 dmin = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(b + 32 + 16 * h)));
            for (int t = 0; t < N; ++t) {
                const int16_t* s32 = xs[t].sum32.data() + 8 * k;
                __m256i msum = _mm256_madd_epi16(m03_lo, pair16(s32[0], s32[2]));
                msum = _mm256_add_epi32(msum, _mm256_madd_epi16(m03_hi, pair16(s32[1], s32[3])));
                msum = _mm256_add_epi32(msum, _mm256_madd_epi16(m47_lo, pair16(s32[4], s32[6])));
                msum = _mm256_add_epi32(msum, _mm256_madd_epi16(m47_hi, pair16(s32[5], s32[7])));
                const __m256 dx = _mm256_set1_ps(xs[t].d[size_t(k)]);
                acc[h][t] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(isum[h][t]), _mm256_mul_ps(d, dx), acc[h][t]);
                accm[h][t] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(msum), _mm256_mul_ps(dmin, dx), accm[h][t]);
            }
        }
    }
    for (int h = 0; h < 2; ++h)
        for (int t = 0; t < N; ++t) _mm256_storeu_ps(out + t * out_stride + 8 * h, _mm256_sub_ps(acc[h][t], accm[h][t]));
}

// Q6_K: the two halves of 8 rows side by side (h = 0, 1). Each row's lane starts at -32 · Σ_s
// sc_s · Σ16_s (the scales sign-extended to int16 pairs (sc_4v, sc_4v+2), (sc_4v+1, sc_4v+3)
// against x's sums per 16); then per half q of the super-block, pair of words j, j+1 (j even) and
// m = 0..3, the words' (dot_rows16_q6_k_vnni's three a word) 6-bit values of elements 128q + 32m
// + 4j .. +7, sub-block 8q + 2m + j/4: the two words' products summed in int16 take the
// sub-block's scale by vpmaddwd.
template <int N>
JOURNEY_AVX2 void dot_rows16_q6_k_avx2(float* out, int64_t out_stride, const std::byte* group, const QuantizedActivations* xs) {
    __m256 acc[2][N];
    for (int h = 0; h < 2; ++h)
        for (int t = 0; t < N; ++t) acc[h][t] = _mm256_setzero_ps();
    const __m256i lo4 = _mm256_set1_epi8(0x0f), b45 = _mm256_set1_epi8(0x30);
    for (int64_t k = 0; k < xs[0].n / kSuper; ++k) {
        const auto* b = reinterpret_cast<const unsigned char*>(group + size_t(k) * kRows16BlockQ6);
        ask_rows16_ahead<kRows16BlockQ6>(b);
        __m256i sc[16][2];  // sub-block s's scale in both int16 halves of each row's lane
        __m256i isum[2][N];
        for (int h = 0; h < 2; ++h)
            for (int t = 0; t < N; ++t) isum[h][t] = _mm256_setzero_si256();
        const __m256i p0 = load32(kRows16Avx2.word_pair[0]), p1 = load32(kRows16Avx2.word_pair[1]);
        for (int v = 0; v < 4; ++v)
            for (int h = 0; h < 2; ++h) {
                const __m256i w = load32(b + 32 + 64 * v + 32 * h);
                const __m256i even = _mm256_srai_epi16(_mm256_slli_epi16(w, 8), 8), odd = _mm256_srai_epi16(w, 8);
                for (int t = 0; t < N; ++t) {
                    const int16_t* s16 = xs[t].sum16.data() + 16 * k + 4 * v;
                    isum[h][t] = _mm256_add_epi32(isum[h][t], _mm256_add_epi32(_mm256_madd_epi16(even, pair16(s16[0], s16[2])),
                                                                               _mm256_madd_epi16(odd, pair16(s16[1], s16[3]))));
                }
                sc[4 * v][h] = _mm256_shuffle_epi8(even, p0);
                sc[4 * v + 1][h] = _mm256_shuffle_epi8(odd, p0);
                sc[4 * v + 2][h] = _mm256_shuffle_epi8(even, p1);
                sc[4 * v + 3][h] = _mm256_shuffle_epi8(odd, p1);
            }
        for (int h = 0; h < 2; ++h)
            for (int t = 0; t < N; ++t) isum[h][t] = _mm256_sub_epi32(_mm256_setzero_si256(), _mm256_slli_epi32(isum[h][t], 5));
#pragma GCC unroll 1
        for (int q = 0; q < 2; ++q)
#pragma GCC unroll 1
            for (int j = 0; j < 8; j += 2) {
                const unsigned char* p = b + 288 + 192 * (8 * q + j);
#pragma GCC unroll 4
                for (int m = 0; m < 4; ++m) {
                    __m256i e[2][2];  // word j + i, half h
                    for (int i = 0; i < 2; ++i)
                        for (int h = 0; h < 2; ++h) {
                            const unsigned char* w = p + 192 * i + 32 * h;
                            const __m256i l = load32(w + 64 * (m % 2)), H = load32(w + 128);
                            const __m256i low = m < 2 ? _mm256_and_si256(l, lo4) : _mm256_and_si256(_mm256_srli_epi16(l, 4), lo4);
                            const __m256i high = m == 0 ? _mm256_slli_epi16(H, 4) : m == 1 ? _mm256_slli_epi16(H, 2) : m == 2 ? H : _mm256_srli_epi16(H, 2);
                            e[i][h] = _mm256_or_si256(low, _mm256_and_si256(high, b45));
                        }
                    const int s = 8 * q + 2 * m + j / 4;
                    for (int t = 0; t < N; ++t) {
                        const int8_t* xo = xs[t].q.data() + k * kSuper + 128 * q + 32 * m + 4 * j;
                        const __m256i x0 = bcast4(xo), x1 = bcast4(xo + 4);
                        for (int h = 0; h < 2; ++h) {
                            const __m256i sum = _mm256_add_epi16(_mm256_maddubs_epi16(e[0][h], x0), _mm256_maddubs_epi16(e[1][h], x1));
                            isum[h][t] = _mm256_add_epi32(isum[h][t], _mm256_madd_epi16(sum, sc[s][h]));
                        }
                    }
                }
            }
        for (int h = 0; h < 2; ++h) {
            const __m256 d = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(b + 16 * h)));
            for (int t = 0; t < N; ++t)
                acc[h][t] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(isum[h][t]), _mm256_mul_ps(d, _mm256_set1_ps(xs[t].d[size_t(k)])), acc[h][t]);
        }
    }
    for (int h = 0; h < 2; ++h)
        for (int t = 0; t < N; ++t) _mm256_storeu_ps(out + t * out_stride + 8 * h, acc[h][t]);
}

// One group of 16 regrouped rows against tokens t .. t+N-1.
template <int N>
JOURNEY_AVX2 void rows16_tokens_avx2(DType t, float* out, int64_t out_stride, const std::byte* group, const QuantizedActivations* xs) {
    if (t == DType::Q6_K) dot_rows16_q6_k_avx2<N>(out, out_stride, group, xs);
    else dot_rows16_q4_k_avx2<N>(out, out_stride, group, xs);
}

}  // namespace

bool has_k_dot(DType t) { return t == DType::Q4_K || t == DType::Q5_K || t == DType::Q6_K; }

void dot_rows_k(float* out, const Matrix& W, const QuantizedActivations& x, int64_t r0, int64_t r1, DotPath path) {
    const bool fast = path == DotPath::vnni;
    // One row at a time, each super-block asking for the lines kStreamAhead bytes on (gemv.h):
    // on AMD Zen 4 two or four rows at once from their own streams (sharing x's loads) ran at
    // half the rate of one (13:40 UTC 3 Dec). Q4_K and Q6_K packed 16 rows side by side
    // (pack_rows16) is one stream again, and takes whole groups of 16 here (VNNI and AVX2).
    const size_t row_bytes = dtype_bytes(W.dtype, uint64_t(W.cols));
    if (fast && W.rows16 && W.dtype == DType::Q4_K) {
        const size_t group_bytes = 16 * row_bytes;
        for (; r0 < r1 && r0 % 16 != 0; ++r0) out[r0] = dot_row_q45_k_vnni<false>(W.data + size_t(r0) * row_bytes, x);
        for (; r0 + 16 <= r1; r0 += 16) dot_rows16_q4_k_vnni<1>(out + r0, 0, W.rows16 + size_t(r0 / 16) * group_bytes, &x);
    }
    if (fast && W.rows16 && W.dtype == DType::Q6_K) {
        const size_t group_bytes = 16 * row_bytes;
        for (; r0 < r1 && r0 % 16 != 0; ++r0) out[r0] = dot_row_q6_k_vnni(W.data + size_t(r0) * row_bytes, x);
        for (; r0 + 16 <= r1; r0 += 16) dot_rows16_q6_k_vnni<1>(out + r0, 0, W.rows16 + size_t(r0 / 16) * group_bytes, &x);
    }
    if (path == DotPath::avx2) {
        // Q4_K and Q6_K regrouped 16 rows (pack_rows16): whole groups of 16 by the 16-row kernel,
        // rows before the first and after the last as stored (the same bits either way).
        if (W.rows16 && (W.dtype == DType::Q4_K || W.dtype == DType::Q6_K)) {
            const size_t group_bytes = 16 * row_bytes;
            const int64_t g0 = std::min(r1, (r0 + 15) / 16 * 16);
            dot_rows_k(out, Matrix{W.dtype, W.data, W.rows, W.cols, W.layout}, x, r0, g0, path);
            for (r0 = g0; r0 + 16 <= r1; r0 += 16)
                rows16_tokens_avx2<1>(W.dtype, out + r0, 0, W.rows16 + size_t(r0 / 16) * group_bytes, &x);
        }
        for (int64_t r = r0; r < r1; ++r) {
            const std::byte* row = W.data + size_t(r) * row_bytes;
            switch (W.dtype) {
                case DType::Q4_K: out[r] = dot_row_q45_k_avx2<false>(row, x); break;
                case DType::Q5_K: out[r] = dot_row_q45_k_avx2<true>(row, x); break;
                default: out[r] = dot_row_q6_k_avx2(row, x); break;
            }
        }
        return;
    }
    for (int64_t r = r0; r < r1; ++r) {
        const std::byte* row = W.data + size_t(r) * row_bytes;
        switch (W.dtype) {
            case DType::Q4_K: out[r] = fast ? dot_row_q45_k_vnni<false>(row, x) : dot_row_portable_q45<false>(row, x); break;
            case DType::Q5_K: out[r] = fast ? dot_row_q45_k_vnni<true>(row, x) : dot_row_portable_q45<true>(row, x); break;
            default: out[r] = fast ? dot_row_q6_k_vnni(row, x) : dot_row_portable_q6(row, x); break;
        }
    }
}

bool dot_rows_k_tokens(float* out, int64_t out_stride, const Matrix& W, const QuantizedActivations* xs, int T, int64_t r0,
                       int64_t r1, bool fast) {
    if (!fast && quant_dot_avx2_available()) {  // the one-token dispatch's AVX2 path (dot.cpp)
        if (W.rows16 && (W.dtype == DType::Q4_K || W.dtype == DType::Q6_K)) {
            // Regrouped rows (pack_rows16): each group of 16 read from memory for its first
            // tokens and from cache for the others, 4 tokens at a time (then 2, 1); rows before
            // the first whole group and after the last as stored.
            const Matrix stored{W.dtype, W.data, W.rows, W.cols, W.layout};
            const size_t group_bytes = 16 * dtype_bytes(W.dtype, uint64_t(W.cols));
            const int64_t g0 = std::min(r1, (r0 + 15) / 16 * 16);
            if (r0 < g0) dot_rows_k_tokens(out, out_stride, stored, xs, T, r0, g0, fast);
            int64_t r = g0;
            for (; r + 16 <= r1; r += 16) {
                const std::byte* g = W.rows16 + size_t(r / 16) * group_bytes;
                int t = 0;
                for (; t + 4 <= T; t += 4) rows16_tokens_avx2<4>(W.dtype, out + t * out_stride + r, out_stride, g, xs + t);
                for (; t + 2 <= T; t += 2) rows16_tokens_avx2<2>(W.dtype, out + t * out_stride + r, out_stride, g, xs + t);
                for (; t < T; ++t) rows16_tokens_avx2<1>(W.dtype, out + t * out_stride + r, out_stride, g, xs + t);
            }
            if (r < r1) dot_rows_k_tokens(out, out_stride, stored, xs, T, r, r1, fast);
            return true;
        }
        switch (W.dtype) {
            case DType::Q4_K: dot_rows_k_tokens_avx2<DType::Q4_K>(out, out_stride, W, xs, T, r0, r1); return true;
            case DType::Q5_K: dot_rows_k_tokens_avx2<DType::Q5_K>(out, out_stride, W, xs, T, r0, r1); return true;
            case DType::Q6_K: dot_rows_k_tokens_avx2<DType::Q6_K>(out, out_stride, W, xs, T, r0, r1); return true;
            default: return false;
        }
    }
    if (fast && W.dtype == DType::Q6_K) {
        const size_t row_bytes = dtype_bytes(W.dtype, uint64_t(W.cols));
        // Rows as stored, one at a time (each pass after the first from cache: only it asks ahead)
        const auto rows_alone = [&](int64_t a, int64_t b) {
            for (int64_t r = a; r < b; ++r) {
                const std::byte* row = W.data + size_t(r) * row_bytes;
                int t = 0;
                for (; t + 4 <= T; t += 4) dot_row_q6_k_tokens_vnni<4>(out + t * out_stride + r, out_stride, row, xs + t, t == 0);
                for (; t + 2 <= T; t += 2) dot_row_q6_k_tokens_vnni<2>(out + t * out_stride + r, out_stride, row, xs + t, t == 0);
                for (; t < T; ++t) dot_row_q6_k_tokens_vnni<1>(out + t * out_stride + r, out_stride, row, xs + t, t == 0);
            }
        };
        if (!W.rows16) {
            rows_alone(r0, r1);
            return true;
        }
        // Regrouped rows (pack_rows16): whole groups of 16 with the 16-row kernel, each group read
        // from memory for its first tokens and from cache for the others; rows before the first
        // whole group and after the last as stored (the one-token path, dot_rows_k, does the same).
        const int64_t g0 = std::min(r1, (r0 + 15) / 16 * 16);
        rows_alone(r0, g0);
        int64_t r = g0;
        for (; r + 16 <= r1; r += 16) {
            const std::byte* g = W.rows16 + size_t(r / 16) * 16 * row_bytes;
            int t = 0;
            for (; t + 4 <= T; t += 4) dot_rows16_q6_k_vnni<4>(out + t * out_stride + r, out_stride, g, xs + t);
            for (; t + 2 <= T; t += 2) dot_rows16_q6_k_vnni<2>(out + t * out_stride + r, out_stride, g, xs + t);
            for (; t < T; ++t) dot_rows16_q6_k_vnni<1>(out + t * out_stride + r, out_stride, g, xs + t);
        }
        rows_alone(r, r1);
        return true;
    }
    if (!(fast && W.rows16 && W.dtype == DType::Q4_K && r0 % 16 == 0 && (r1 % 16 == 0 || r1 == W.rows))) return false;
    const size_t group_bytes = 16 * dtype_bytes(W.dtype, uint64_t(W.cols));
    int64_t r = r0;
    for (; r + 16 <= r1; r += 16) {
        const std::byte* g = W.rows16 + size_t(r / 16) * group_bytes;
        int t = 0;
        for (; t + 4 <= T; t += 4) dot_rows16_q4_k_vnni<4>(out + t * out_stride + r, out_stride, g, xs + t);
        for (; t + 2 <= T; t += 2) dot_rows16_q4_k_vnni<2>(out + t * out_stride + r, out_stride, g, xs + t);
        for (; t < T; ++t) dot_rows16_q4_k_vnni<1>(out + t * out_stride + r, out_stride, g, xs + t);
    }
    for (int t = 0; t < T; ++t) dot_rows_k(out + t * out_stride, W, xs[t], r, r1, DotPath::vnni);  // rows past the last 16 (none when rows16 is set)
    return true;
}

bool can_pack_rows16(const Matrix& W) {
    return (W.dtype == DType::Q4_K || W.dtype == DType::Q6_K) && W.layout == Layout::Linear && W.data && W.rows > 0 &&
           W.rows % 16 == 0 && W.cols > 0 && W.cols % kSuper == 0;
}

size_t rows16_bytes(const Matrix& W) { return dtype_bytes(W.dtype, uint64_t(W.cols)) * size_t(W.rows); }

void pack_rows16(const Matrix& W, std::byte* dst) {
    if (!can_pack_rows16(W)) throw std::invalid_argument("pack_rows16: needs Q4_K or Q6_K, Linear, rows a multiple of 16");
    const int64_t nsb = W.cols / kSuper;
    const size_t row_bytes = dtype_bytes(W.dtype, uint64_t(W.cols)), block_bytes = row_bytes / size_t(nsb);
    const size_t group_block = rows16_block_bytes(W.dtype);
    for (int64_t g = 0; g < W.rows / 16; ++g)
        for (int64_t k = 0; k < nsb; ++k) {
            std::byte* o = dst + size_t(g * nsb + k) * group_block;
            for (int r = 0; r < 16; ++r) {
                const std::byte* b = W.data + size_t(16 * g + r) * row_bytes + size_t(k) * block_bytes;
                rows16_pieces_of(W.dtype, r, [&](int at, int from, int n) { std::memcpy(o + at, b + from, size_t(n)); });
            }
        }
}

void unpack_rows16_block(DType t, const std::byte* o, std::byte* blocks, size_t stride) {
    for (int r = 0; r < 16; ++r)
        rows16_pieces_of(t, r, [&](int at, int from, int n) { std::memcpy(blocks + size_t(r) * stride + size_t(from), o + at, size_t(n)); });
}

}  // namespace journey
