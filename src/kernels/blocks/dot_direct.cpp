// Direct dots for Q2_K, Q3_K, IQ4_XS and IQ4_NL rows with Q8_0 activations, on AVX-512 VNNI and
// on AVX2: each 64 elements are decoded straight into registers (quants, lane scales S/M,
// multipliers A/B) instead of first writing the row out unpacked (blocks/dot_unpacked.cpp). The
// lane arithmetic and its order are dot_unpacked.cpp's, so the bits are those of its portable
// kernel.
#include "dot_kinds.h"

#include <algorithm>
#include <cstring>
#include <immintrin.h>
#include <type_traits>

#include "journey/kernels/blocks/layout.h"
#include "journey/kernels/gemv.h"
#include "journey/kernels/half.h"
#include "../avx2_lanes.h"
#include "../avx512_loads.h"

#define JOURNEY_VNNI __attribute__((target("avx512f,avx512bw,avx512vl,avx512vnni,fma,f16c")))

namespace journey {
namespace {

// acc += float(S · Σ4 w·q) · (A · d_x) for pair p of x (w signed int8; w + 128 against x's q,
// seeded with x's -128·Σq, as dot_unpacked.cpp's lanes_vnni).
JOURNEY_VNNI inline __m512 lanes(__m512 acc, __m512i w, __m512i S, __m512 A, const QuantizedActivations& x, size_t p) {
    const __m512i isum = _mm512_dpbusd_epi32(_mm512_loadu_si512(x.bias_q8_0.data() + 16 * p),
                                             _mm512_xor_si512(w, _mm512_set1_epi8(static_cast<char>(0x80))),
                                             _mm512_loadu_si512(x.q.data() + 64 * p));
    const __m512 dx = _mm512_loadu_ps(x.d_lanes.data() + 16 * p);
    return _mm512_fmadd_ps(_mm512_cvtepi32_ps(_mm512_mullo_epi32(S, isum)), _mm512_mul_ps(A, dx), acc);
}
// acc += float(M · Σ4 q) · (B · d_x): the min term.
JOURNEY_VNNI inline __m512 mins(__m512 acc, __m512i M, __m512 B, const QuantizedActivations& x, size_t p) {
    const __m512 dx = _mm512_loadu_ps(x.d_lanes.data() + 16 * p);
    const __m512i m = _mm512_mullo_epi32(M, _mm512_loadu_si512(x.sum4.data() + 16 * p));
    return _mm512_fmadd_ps(_mm512_cvtepi32_ps(m), _mm512_mul_ps(B, dx), acc);
}

// 4 bytes, each repeated for 4 lanes of 32 bits.
JOURNEY_VNNI inline __m128i spread4(const void* p) {
    int32_t v;
    std::memcpy(&v, p, 4);
    return _mm_shuffle_epi8(_mm_cvtsi32_si128(v), _mm_setr_epi8(0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3));
}

// Q2_K / Q3_K's 2-bit quants of chunk c (elements 64c .. 64c + 63) of a super-block: bits
// 2((e % 128) / 32) of qs[32(e / 128) + e % 32].
JOURNEY_VNNI inline __m512i two_bits(const unsigned char* qs, int c) {
    const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(qs + 32 * (c / 2)));
    const __m512i z = _mm512_inserti64x4(_mm512_zextsi256_si512(v), v, 1);
    const int s = 4 * (c % 2);
    const __m512i shift = _mm512_inserti64x4(_mm512_set1_epi16(short(s)), _mm256_set1_epi16(short(s + 2)), 1);
    return _mm512_and_si512(_mm512_srlv_epi16(z, shift), _mm512_set1_epi8(3));
}

// IQ4's 16 bytes of nibbles a and b as 64 values: [a low, a high, b low, b high].
JOURNEY_VNNI inline __m512i iq4_values(__m128i a, __m128i b) {
    const __m512i z = _mm512_inserti32x4(_mm512_inserti32x4(_mm512_broadcast_i32x4(a), b, 2), b, 3);
    const __m512i n = _mm512_and_si512(_mm512_mask_blend_epi8(0xFFFF0000FFFF0000ull, z, _mm512_srli_epi16(z, 4)), _mm512_set1_epi8(0x0f));
    const __m512i table = _mm512_broadcast_i32x4(_mm_loadu_si128(reinterpret_cast<const __m128i*>(kIq4Values)));
    return _mm512_shuffle_epi8(table, n);
}

// One super-block (or IQ4_NL block pair) of one row into acc; p: x's pair index of its first 64.
template <DType T>
JOURNEY_VNNI inline __m512 block(__m512 acc, const unsigned char* b, const QuantizedActivations& x, size_t p, bool half = false) {
    if constexpr (T == DType::Q2_K) {
        const __m512 A = _mm512_set1_ps(fp16_to_fp32(b + 80)), B = _mm512_set1_ps(fp16_to_fp32(b + 82));
        for (int c = 0; c < 4; ++c) {
            const __m512i sc = _mm512_cvtepu8_epi32(spread4(b + 4 * c));
            const __m512i S = _mm512_and_si512(sc, _mm512_set1_epi32(0x0f));
            const __m512i M = _mm512_sub_epi32(_mm512_setzero_si512(), _mm512_srli_epi32(sc, 4));
            acc = lanes(acc, two_bits(b + 16, c), S, A, x, p + size_t(c));
            acc = mins(acc, M, B, x, p + size_t(c));
        }
    } else if constexpr (T == DType::Q3_K) {
        int8_t sc[16];
        scales_q3_k(b + 96, sc);
        const __m512 A = _mm512_set1_ps(fp16_to_fp32(b + 108));
        const __m256i hm = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b));
        const __m512i hmz = _mm512_inserti64x4(_mm512_zextsi256_si512(hm), hm, 1);
        for (int c = 0; c < 4; ++c) {
            const __m512i bit = _mm512_inserti64x4(_mm512_set1_epi8(char(1 << (2 * c))), _mm256_set1_epi8(char(1 << (2 * c + 1))), 1);
            const __mmask64 high = _mm512_test_epi8_mask(hmz, bit);
            const __m512i low = two_bits(b + 32, c);
            const __m512i w = _mm512_mask_sub_epi8(low, _knot_mask64(high), low, _mm512_set1_epi8(4));
            const __m512i S = _mm512_sub_epi32(_mm512_cvtepi8_epi32(spread4(sc + 4 * c)), _mm512_set1_epi32(32));
            acc = lanes(acc, w, S, A, x, p + size_t(c));
        }
    } else if constexpr (T == DType::IQ4_XS) {
        const __m512 A = _mm512_set1_ps(fp16_to_fp32(b));
        uint16_t scales_h;
        std::memcpy(&scales_h, b + 2, 2);
        for (int c = 0; c < 4; ++c) {
            int ls[2];
            for (int k = 0; k < 2; ++k) {
                const int ib = 2 * c + k;
                ls[k] = (((b[4 + ib / 2] >> 4 * (ib % 2)) & 0x0f) | (((scales_h >> 2 * ib) & 3) << 4)) - 32;
            }
            const __m512i S = _mm512_mask_blend_epi32(0xFF00, _mm512_set1_epi32(ls[0]), _mm512_set1_epi32(ls[1]));
            const unsigned char* qs = b + 8 + 32 * c;
            const __m512i w = iq4_values(_mm_loadu_si128(reinterpret_cast<const __m128i*>(qs)),
                                         _mm_loadu_si128(reinterpret_cast<const __m128i*>(qs + 16)));
            acc = lanes(acc, w, S, A, x, p + size_t(c));
        }
    } else {  // IQ4_NL: two blocks of 32 (half: only the first; the rest as dot_unpacked.cpp's zero padding)
        const __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i*>(b + 2));
        const __m128i bq = half ? a : _mm_loadu_si128(reinterpret_cast<const __m128i*>(b + 20));
        __m512i w = iq4_values(a, bq);
        __m512i S = _mm512_set1_epi32(1);
        __m512 A = _mm512_mask_blend_ps(0xFF00, _mm512_set1_ps(fp16_to_fp32(b)), _mm512_set1_ps(half ? 0.0f : fp16_to_fp32(b + 18)));
        if (half) w = _mm512_maskz_mov_epi8(0xFFFFFFFFull, w), S = _mm512_maskz_mov_epi32(0x00FF, S);
        acc = lanes(acc, w, S, A, x, p);
    }
    return acc;
}

template <DType T>
JOURNEY_VNNI void rows(float* out, const Matrix& W, const QuantizedActivations& x, int64_t r0, int64_t r1) {
    const size_t row_bytes = dtype_bytes(T, uint64_t(W.cols));
    const auto* base = reinterpret_cast<const unsigned char*>(W.data);
    if constexpr (T == DType::IQ4_NL) {
        const int64_t nb = W.cols / 32;
        for (int64_t r = r0; r < r1; ++r) {
            const unsigned char* row = base + size_t(r) * row_bytes;
            __m512 acc = _mm512_setzero_ps();
            int64_t i = 0;
            for (; i + 2 <= nb; i += 2) acc = block<T>(acc, row + 18 * i, x, size_t(i / 2));
            if (i < nb) acc = block<T>(acc, row + 18 * i, x, size_t(i / 2), true);
            out[r] = avx512::hsum16(acc);
        }
    } else {
        const int64_t nb = W.cols / 256;
        const size_t bb = dtype_bytes(T, 256);
        int64_t r = r0;
        // Two rows side by side (two independent chains of fmas), except IQ4_XS: its two streams
        // from memory ran at 4-5 GB/s on one Zen 4 core against 8-16 one row at a time (68 MB of
        // rows, n 2048), and Llama 3.2 1B IQ4_XS tg32 -t 1 made 13.2, 14.3 tok/s by CPU time
        // against 16.6, 16.5 one row at a time (alternating, load ~8, 05:55 UTC 7 Dec); in cache
        // (scripts/bench_iq_dot.sh) 6.7 ns a super-block two rows at a time, 7.3 one. (Each row's sum
        // is the same chain either way: the same bits.)
        for (; T != DType::IQ4_XS && r + 2 <= r1; r += 2) {
            const unsigned char* ra = base + size_t(r) * row_bytes;
            const unsigned char* rb = ra + row_bytes;
            __m512 a = _mm512_setzero_ps(), c = _mm512_setzero_ps();
            for (int64_t i = 0; i < nb; ++i) {
                a = block<T>(a, ra + bb * size_t(i), x, size_t(4 * i));
                c = block<T>(c, rb + bb * size_t(i), x, size_t(4 * i));
            }
            out[r] = avx512::hsum16(a);
            out[r + 1] = avx512::hsum16(c);
        }
        for (; r < r1; ++r) {
            const unsigned char* ra = base + size_t(r) * row_bytes;
            __m512 a = _mm512_setzero_ps();
            for (int64_t i = 0; i < nb; ++i) a = block<T>(a, ra + bb * size_t(i), x, size_t(4 * i));
            out[r] = avx512::hsum16(a);
        }
    }
}

// ---- AVX2 (AVX2, FMA, F16C: CPUs without AVX-512 VNNI) ---------------------------------------
// dot_unpacked.cpp's lanes_avx2 with the blocks decoded into registers: each pair of x's Q8_0
// blocks (64 elements) is lanes lo and hi (8 floats each, avx2_lanes.h), and each half's 32
// quants w one vector of int8. Per lane (a group of 4 elements), exactly as the portable loop:
// vpmaddubsw of |w| against x's quants with w's sign (vpsignb: x is -127..127, so the negation is
// exact; |w| <= 127: IQ4's values -127..113, Q3_K's -4..3; Q2_K's 0..3 taken as they are), int16
// pair sums |.| <= 2 · 127 · 127 < 2^15, then vpmaddwd by S in both int16 halves of the lane: the
// int32 S · Σ4 w·q (|.| <= 32 · 4 · 127 · 127), the portable loop's product (integers: exact in
// any grouping). Q2_K's min, M = -m: vpmaddubsw of m (0..15) against x's quants, vpmaddwd by -1:
// M · Σ4 q, the portable loop's M · x.sum4. Then the same float operations per lane in the same
// order: cvtdq2ps, A · d_x (one rounding), fma; with the min B · d_x, fma; at the end hsum16 in
// reduce16's order. The same bits. As ggml's AVX2 ggml_vec_dot_{q2_K,q3_K,iq4_xs}_q8_K decode:
// 2-bit quants by shifts of one 32-byte load per 128 elements, Q3_K's high bit as a compare of
// its hmask with 1 << (e / 32), IQ4's values by vpshufb of the nibbles in the 16-value table,
// the scales spread to their lanes by vpshufb. One row at a time (one stream from memory: the
// AVX-512 rows' reason), each super-block decoded once for N = 4, 2 or 1 tokens (the N tokens'
// 2N float sums and a half's decoded vectors in the 16 registers).

// Half j of a super-block (elements 32j .. 32j + 31: lanes lo or hi of pair j / 2; sub-blocks of
// 16 2j and 2j + 1): s16[j % 4] picks, from 8 int16 scales in both 16-byte lanes (those of
// sub-blocks 0-7 for j < 4, else 8-15), the scale of 2j into every int16 of the low lane and
// 2j + 1 into the high one; s8[j] the same from 16 bytes (one a sub-block) in both lanes.
struct PicksAvx2 {
    alignas(32) uint8_t s16[4][32];
    alignas(32) uint8_t s8[8][32];
    constexpr PicksAvx2() : s16(), s8() {
        for (int j = 0; j < 4; ++j)
            for (int i = 0; i < 32; ++i) s16[j][i] = uint8_t(2 * (2 * j + i / 16) + i % 2);
        for (int j = 0; j < 8; ++j)
            for (int i = 0; i < 32; ++i) s8[j][i] = uint8_t(2 * j + i / 16);
    }
};
constexpr PicksAvx2 kPicksAvx2;

JOURNEY_AVX2 inline __m256i ld(const void* p) { return _mm256_loadu_si256(static_cast<const __m256i*>(p)); }
JOURNEY_AVX2 inline __m256i pick(__m256i v, const uint8_t* table) {
    return _mm256_shuffle_epi8(v, _mm256_load_si256(reinterpret_cast<const __m256i*>(table)));
}
JOURNEY_AVX2 inline float half_avx2(const unsigned char* p) {
    uint16_t h;
    std::memcpy(&h, p, 2);
    return _cvtsh_ss(h);  // exactly fp16_to_fp32
}

// acc += float(S · Σ4 w·q) · (A · d_x) per lane: a = |w| as unsigned bytes, w's sign moved onto
// x's quants q (kSigned; else w = a >= 0 and q as they are), S in both int16 halves of a lane.
template <bool kSigned>
JOURNEY_AVX2 inline __m256 lanes_avx2(__m256 acc, __m256i a, __m256i w, __m256i S, __m256 A, __m256i q, __m256 dx) {
    const __m256i p = _mm256_maddubs_epi16(a, kSigned ? _mm256_sign_epi8(q, w) : q);
    return _mm256_fmadd_ps(_mm256_cvtepi32_ps(_mm256_madd_epi16(p, S)), _mm256_mul_ps(A, dx), acc);
}
// acc += float(M · Σ4 q) · (B · d_x) per lane, M = -m (m: unsigned bytes, each lane's 4 alike).
JOURNEY_AVX2 inline __m256 mins_avx2(__m256 acc, __m256i m, __m256 B, __m256i q, __m256 dx) {
    const __m256i msum = _mm256_madd_epi16(_mm256_maddubs_epi16(m, q), _mm256_set1_epi16(-1));
    return _mm256_fmadd_ps(_mm256_cvtepi32_ps(msum), _mm256_mul_ps(B, dx), acc);
}

// One row against tokens xs[0 .. N-1] (n_blocks: super-blocks, or IQ4_NL's blocks of 32):
// out[t · out_stride] has the bits of lanes_portable on token t alone.
template <DType T, int N>
JOURNEY_AVX2 void row_avx2(float* out, int64_t out_stride, const unsigned char* row, int64_t n_blocks, const QuantizedActivations* xs,
                           bool ask) {
    __m256 acc[N][2];
    for (int t = 0; t < N; ++t) acc[t][0] = acc[t][1] = _mm256_setzero_ps();
    const __m256i low4 = _mm256_set1_epi8(0x0f), ones = _mm256_set1_epi16(1);
    const __m256i table = _mm256_broadcastsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(kIq4Values)));
    const auto x_q = [&](int t, size_t p, int h) { return ld(xs[t].q.data() + 64 * p + 32 * size_t(h)); };
    const auto x_d = [&](int t, size_t p, int h) { return _mm256_loadu_ps(xs[t].d_lanes.data() + 16 * p + 8 * size_t(h)); };
    if constexpr (T == DType::IQ4_NL) {  // block i (18 bytes) is half i % 2 of pair i / 2; S = 1
        const auto half = [&](const unsigned char* b, size_t p, auto h) {
            const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(b + 2));
            const __m256i w = _mm256_shuffle_epi8(table, _mm256_and_si256(_mm256_set_m128i(_mm_srli_epi16(v, 4), v), low4));
            const __m256i a = _mm256_abs_epi8(w);
            const __m256 A = _mm256_set1_ps(half_avx2(b));
            for (int t = 0; t < N; ++t) acc[t][h] = lanes_avx2<true>(acc[t][h], a, w, ones, A, x_q(t, p, h), x_d(t, p, h));
        };
        int64_t i = 0;
        for (; i + 2 <= n_blocks; i += 2) {
            const unsigned char* b = row + 18 * size_t(i);
            if (ask) ask_ahead<36>(b);
            half(b, size_t(i / 2), std::integral_constant<int, 0>());
            half(b + 18, size_t(i / 2), std::integral_constant<int, 1>());
        }
        if (i < n_blocks) {  // the last block alone; hi as the unpacked zero padding: fma(0, 0 · d_x)
            half(row + 18 * size_t(i), size_t(i / 2), std::integral_constant<int, 0>());
            const __m256 zero = _mm256_setzero_ps();
            for (int t = 0; t < N; ++t) acc[t][1] = _mm256_fmadd_ps(zero, _mm256_mul_ps(zero, x_d(t, size_t(i / 2), 1)), acc[t][1]);
        }
    } else {
        constexpr size_t kBytes = T == DType::Q2_K ? 84 : T == DType::Q3_K ? 110 : 136;
        for (int64_t k = 0; k < n_blocks; ++k) {
            const unsigned char* b = row + kBytes * size_t(k);
            if (ask) ask_ahead<kBytes>(b);
            __m256i sc_lo = ones, sc_hi = ones, mb = ones, hm = ones;  // the scales of sub-blocks 0-7, 8-15; Q2_K's m; Q3_K's hmask
            __m256 A, B = _mm256_setzero_ps();
            uint16_t scales_h = 0;
            if constexpr (T == DType::Q2_K) {
                const __m128i sc = _mm_loadu_si128(reinterpret_cast<const __m128i*>(b));
                const __m128i s = _mm_and_si128(sc, _mm_set1_epi8(0x0f));
                sc_lo = _mm256_broadcastsi128_si256(_mm_cvtepu8_epi16(s));
                sc_hi = _mm256_broadcastsi128_si256(_mm_cvtepu8_epi16(_mm_srli_si128(s, 8)));
                mb = _mm256_broadcastsi128_si256(_mm_and_si128(_mm_srli_epi16(sc, 4), _mm_set1_epi8(0x0f)));
                A = _mm256_set1_ps(half_avx2(b + 80));
                B = _mm256_set1_ps(half_avx2(b + 82));
            } else if constexpr (T == DType::Q3_K) {  // scales_q3_k's 16 scales, as ggml's AVX2 q3_K unpacks them, - 32
                uint32_t aux[3];
                std::memcpy(aux, b + 96, 12);
                const uint32_t m4 = 0x0f0f0f0f, m2 = 0x03030303;
                const __m128i sc = _mm_sub_epi8(_mm_set_epi32(int(((aux[1] >> 4) & m4) | (((aux[2] >> 6) & m2) << 4)),
                                                              int(((aux[0] >> 4) & m4) | (((aux[2] >> 4) & m2) << 4)),
                                                              int((aux[1] & m4) | (((aux[2] >> 2) & m2) << 4)),
                                                              int((aux[0] & m4) | ((aux[2] & m2) << 4))),
                                                _mm_set1_epi8(32));
                sc_lo = _mm256_broadcastsi128_si256(_mm_cvtepi8_epi16(sc));
                sc_hi = _mm256_broadcastsi128_si256(_mm_cvtepi8_epi16(_mm_srli_si128(sc, 8)));
                hm = ld(b);
                A = _mm256_set1_ps(half_avx2(b + 108));
            } else {
                std::memcpy(&scales_h, b + 2, 2);
                A = _mm256_set1_ps(half_avx2(b));
            }
#pragma GCC unroll 4
            for (int c = 0; c < 4; ++c) {
                const size_t p = 4 * size_t(k) + size_t(c);  // x's pair
                __m256i v = ones, lo = ones, hi = ones;
                if constexpr (T == DType::IQ4_XS) {  // sub-blocks 2c, 2c + 1: low nibbles then high ones
                    v = ld(b + 8 + 32 * c);
                    lo = _mm256_shuffle_epi8(table, _mm256_and_si256(v, low4));
                    hi = _mm256_shuffle_epi8(table, _mm256_and_si256(_mm256_srli_epi16(v, 4), low4));
                } else {
                    v = ld(b + (T == DType::Q2_K ? 16 : 32) + 32 * (c / 2));
                }
#pragma GCC unroll 2
                for (int h = 0; h < 2; ++h) {
                    const int j = 2 * c + h;  // the half of the super-block
                    __m256i w, S;
                    if constexpr (T == DType::IQ4_XS) {
                        w = h == 0 ? _mm256_permute2x128_si256(lo, hi, 0x20) : _mm256_permute2x128_si256(lo, hi, 0x31);
                        const int ls = ((b[4 + j / 2] >> 4 * (j % 2)) & 0x0f) | (((scales_h >> 2 * j) & 3) << 4);
                        S = _mm256_set1_epi16(short(ls - 32));
                    } else {
                        w = _mm256_and_si256(_mm256_srli_epi16(v, 2 * (2 * (c % 2) + h)), _mm256_set1_epi8(3));
                        if constexpr (T == DType::Q3_K) {  // -4 where the high bit is clear
                            const __m256i clear = _mm256_cmpeq_epi8(_mm256_and_si256(hm, _mm256_set1_epi8(char(1 << j))), _mm256_setzero_si256());
                            w = _mm256_sub_epi8(w, _mm256_and_si256(clear, _mm256_set1_epi8(4)));
                        }
                        S = pick(j < 4 ? sc_lo : sc_hi, kPicksAvx2.s16[j % 4]);
                    }
                    if constexpr (T == DType::Q2_K) {
                        const __m256i m = pick(mb, kPicksAvx2.s8[j]);
                        for (int t = 0; t < N; ++t) {
                            const __m256i q = x_q(t, p, h);
                            const __m256 dx = x_d(t, p, h);
                            acc[t][h] = mins_avx2(lanes_avx2<false>(acc[t][h], w, w, S, A, q, dx), m, B, q, dx);
                        }
                    } else {
                        const __m256i a = _mm256_abs_epi8(w);
                        for (int t = 0; t < N; ++t) acc[t][h] = lanes_avx2<true>(acc[t][h], a, w, S, A, x_q(t, p, h), x_d(t, p, h));
                    }
                }
            }
        }
    }
    for (int t = 0; t < N; ++t) out[t * out_stride] = avx2::hsum16(acc[t][0], acc[t][1]);
}

// Rows r0 .. r1 against T tokens: one token, one row after another; several, groups of rows of
// about 32 KiB (from cache after the first token group, which alone asks ahead), each taken by 4
// tokens at a time, then 2, 1.
template <DType T>
void rows_avx2(float* out, int64_t out_stride, const Matrix& W, const QuantizedActivations* xs, int n_tokens, int64_t r0, int64_t r1) {
    const size_t row_bytes = dtype_bytes(T, uint64_t(W.cols));
    const int64_t n_blocks = W.cols / int64_t(dtype_block(T));
    const int64_t group = n_tokens == 1 ? std::max<int64_t>(1, r1 - r0) : std::max<int64_t>(1, int64_t(32768 / row_bytes));
    const auto row = [&](int64_t r) { return reinterpret_cast<const unsigned char*>(W.data + size_t(r) * row_bytes); };
    for (int64_t g = r0; g < r1; g += group) {
        const int64_t g1 = std::min(r1, g + group);
        int t = 0;
        for (; t + 4 <= n_tokens; t += 4)
            for (int64_t r = g; r < g1; ++r) row_avx2<T, 4>(out + t * out_stride + r, out_stride, row(r), n_blocks, xs + t, t == 0);
        for (; t + 2 <= n_tokens; t += 2)
            for (int64_t r = g; r < g1; ++r) row_avx2<T, 2>(out + t * out_stride + r, out_stride, row(r), n_blocks, xs + t, t == 0);
        for (; t < n_tokens; ++t)
            for (int64_t r = g; r < g1; ++r) row_avx2<T, 1>(out + t * out_stride + r, out_stride, row(r), n_blocks, xs + t, t == 0);
    }
}

}  // namespace

bool has_direct_dot(DType t) { return t == DType::Q2_K || t == DType::Q3_K || t == DType::IQ4_XS || t == DType::IQ4_NL; }

void dot_rows_direct(float* out, const Matrix& W, const QuantizedActivations& x, int64_t r0, int64_t r1) {
    switch (W.dtype) {
        case DType::Q2_K: return rows<DType::Q2_K>(out, W, x, r0, r1);
        case DType::Q3_K: return rows<DType::Q3_K>(out, W, x, r0, r1);
        case DType::IQ4_XS: return rows<DType::IQ4_XS>(out, W, x, r0, r1);
        case DType::IQ4_NL: return rows<DType::IQ4_NL>(out, W, x, r0, r1);
        default: break;
    }
}

void dot_rows_direct_avx2(float* out, int64_t out_stride, const Matrix& W, const QuantizedActivations* xs, int T, int64_t r0,
                          int64_t r1) {
    switch (W.dtype) {
        case DType::Q2_K: return rows_avx2<DType::Q2_K>(out, out_stride, W, xs, T, r0, r1);
        case DType::Q3_K: return rows_avx2<DType::Q3_K>(out, out_stride, W, xs, T, r0, r1);
        case DType::IQ4_XS: return rows_avx2<DType::IQ4_XS>(out, out_stride, W, xs, T, r0, r1);
        case DType::IQ4_NL: return rows_avx2<DType::IQ4_NL>(out, out_stride, W, xs, T, r0, r1);
        default: break;
    }
}

}  // namespace journey
