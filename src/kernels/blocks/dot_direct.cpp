// Direct AVX-512 VNNI dots for Q2_K, Q3_K, IQ4_XS and IQ4_NL rows with Q8_0 activations: each 64
// elements are decoded straight into registers (quants, lane scales S/M, multipliers A/B) instead
// of first writing the row out unpacked (blocks/dot_unpacked.cpp). The lane arithmetic and its
// order are dot_unpacked.cpp's, so the bits are those of its portable kernel.
#include "dot_kinds.h"

#include <cstring>
#include <immintrin.h>

#include "journey/kernels/blocks/layout.h"
#include "journey/kernels/half.h"
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

}  // namespace journey
