// K-quant rows (Q4_K, Q5_K, Q6_K) · Q8_0-quantized activations (the arithmetic is stated in
// include/journey/kernels/quant_dot.h). The portable loop is the definition; the AVX-512 VNNI
// kernel does the same integer sums and the same float operations per lane, 16 lanes (one pair
// of activation blocks, 64 elements) at a time, so the two give the same bits.
#include "quant_dot_k.h"

#include <cmath>
#include <cstring>
#include <immintrin.h>
#include <type_traits>

#include "dequant_blocks.h"
#include "journey/kernels/convert.h"

namespace journey {
namespace {

constexpr int64_t kSuper = 256;  // elements per K-quant super-block: 4 pairs of x blocks

float half_at(const std::byte* p) {
    uint16_t h;
    std::memcpy(&h, p, 2);
    return f16_to_f32(h);
}

// One super-block, unpacked for the portable loop: q[256] as integers (Q4_K 0..15, Q6_K
// -32..31), the integer scale and min of each lane group of 4 elements, and d, dmin.
struct Unpacked {
    int8_t q[kSuper];
    int32_t scale[kSuper / 4], min[kSuper / 4];
    float d, dmin;
};

// Q4_K, and Q5_K (kFive) whose fifth bits lie in qh[32] before the nibbles: bit 2i of qh[l]
// for element l of the i-th 64, bit 2i+1 for element l + 32.
template <bool kFive>
void unpack_q45_k(const unsigned char* b, Unpacked& u) {
    u.d = half_at(reinterpret_cast<const std::byte*>(b));
    u.dmin = half_at(reinterpret_cast<const std::byte*>(b + 2));
    const unsigned char* qh = b + 16;
    const unsigned char* qs = b + (kFive ? 48 : 16);
    for (int i = 0; i < 4; ++i)  // 64 elements: low nibbles of 32 bytes, then their high nibbles
        for (int l = 0; l < 32; ++l) {
            u.q[64 * i + l] = int8_t((qs[32 * i + l] & 0x0f) | (kFive ? ((qh[l] >> (2 * i)) & 1) << 4 : 0));
            u.q[64 * i + 32 + l] = int8_t((qs[32 * i + l] >> 4) | (kFive ? ((qh[l] >> (2 * i + 1)) & 1) << 4 : 0));
        }
    for (int s = 0; s < 8; ++s) {  // sub-block s: elements 32s .. 32s+31, lane groups 8s .. 8s+7
        uint8_t sc, m;
        scale_min_k4(s, b + 4, sc, m);
        for (int g = 8 * s; g < 8 * s + 8; ++g) u.scale[g] = sc, u.min[g] = m;
    }
}

void unpack_q6_k(const unsigned char* b, Unpacked& u) {
    const unsigned char* ql = b;
    const unsigned char* qh = b + 128;
    const auto* sc = reinterpret_cast<const int8_t*>(b + 192);
    u.d = half_at(reinterpret_cast<const std::byte*>(b + 208));
    u.dmin = 0.0f;
    for (int h = 0; h < 2; ++h, ql += 64, qh += 32)
        for (int l = 0; l < 32; ++l) {
            int8_t* q = u.q + 128 * h;
            q[l] = int8_t(((ql[l] & 0x0f) | ((qh[l] & 3) << 4)) - 32);
            q[l + 32] = int8_t(((ql[l + 32] & 0x0f) | (((qh[l] >> 2) & 3) << 4)) - 32);
            q[l + 64] = int8_t(((ql[l] >> 4) | (((qh[l] >> 4) & 3) << 4)) - 32);
            q[l + 96] = int8_t(((ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4)) - 32);
        }
    for (int g = 0; g < kSuper / 4; ++g) u.scale[g] = sc[g / 4], u.min[g] = 0;  // scale per 16 elements
}

template <DType D>
constexpr size_t kBlockBytes = D == DType::Q4_K ? 144 : D == DType::Q5_K ? 176 : 210;

template <DType D>
float dot_row_portable(const std::byte* row, const QuantizedActivations& x) {
    constexpr size_t block_bytes = kBlockBytes<D>;
    constexpr bool with_min = D != DType::Q6_K;
    float acc[16] = {};
    Unpacked u;
    for (int64_t k = 0; k < x.n / kSuper; ++k) {
        const auto* b = reinterpret_cast<const unsigned char*>(row + size_t(k) * block_bytes);
        if constexpr (D == DType::Q6_K) unpack_q6_k(b, u);
        else unpack_q45_k<D == DType::Q5_K>(b, u);
        for (int c = 0; c < 4; ++c) {  // pair c: x blocks 8k + 2c and 8k + 2c + 1
            const int64_t p = 4 * k + c;
            for (int l = 0; l < 16; ++l) {
                const int g = 16 * c + l;  // lane group: elements 4g .. 4g+3 of the super-block
                const int8_t* qx = x.q.data() + p * 64 + 4 * l;
                const int32_t isum = u.q[4 * g] * qx[0] + u.q[4 * g + 1] * qx[1] + u.q[4 * g + 2] * qx[2] + u.q[4 * g + 3] * qx[3];
                const float dx = x.d_lanes[size_t(p * 16 + l)];
                acc[l] = std::fma(float(u.scale[g] * isum), u.d * dx, acc[l]);
                if constexpr (with_min)
                    acc[l] = std::fma(float(-(u.min[g] * x.sum4[size_t(p * 16 + l)])), u.dmin * dx, acc[l]);
            }
        }
    }
    for (int s = 8; s >= 1; s /= 2)
        for (int l = 0; l < s; ++l) acc[l] += acc[l + s];
    return acc[0];
}

// ---- AVX-512 VNNI ----------------------------------------------------------------------------
// (The zero-masked forms with full masks spell out the plain ones without GCC 12's false
// "may be used uninitialized" warnings.)

#define JOURNEY_VNNI __attribute__((target("avx512f,avx512bw,avx512vl,avx512vnni,f16c")))

JOURNEY_VNNI inline float hsum_lanes(__m512 a) {
    alignas(64) float lanes[16];
    _mm512_store_ps(lanes, a);
    for (int s = 8; s >= 1; s /= 2)
        for (int l = 0; l < s; ++l) lanes[l] += lanes[l + s];
    return lanes[0];
}

// The eight 6-bit scales and eight mins of a Q4_K/Q5_K super-block (12 packed bytes, as
// scale_min_k4 reads them) as 16 int32 lanes: scales 0-7, then mins 0-7. Whole words at a time:
// bytes 0-3 hold scales 0-3 (low 6 bits), bytes 4-7 mins 0-3, bytes 8-11 the low 4 bits of
// scales 4-7 (low nibbles) and mins 4-7 (high nibbles), whose top 2 bits are the top 2 bits of
// bytes 0-3 (scales) and 4-7 (mins).
JOURNEY_VNNI inline __m512i scales_mins_k4(const unsigned char* q) {
    uint32_t w[3];
    std::memcpy(w, q, 12);
    const uint32_t six = 0x3f3f3f3f, four = 0x0f0f0f0f, two = 0x03030303;
    const uint32_t v[4] = {w[0] & six, (w[2] & four) | (((w[0] >> 6) & two) << 4), w[1] & six,
                           ((w[2] >> 4) & four) | (((w[1] >> 6) & two) << 4)};
    return _mm512_maskz_cvtepu8_epi32(0xFFFF, _mm_loadu_si128(reinterpret_cast<const __m128i*>(v)));
}

// Q4_K: pair c's 64 elements are the low then the high nibbles of 32 bytes; sub-blocks 2c and
// 2c+1 (lanes 0-7 and 8-15) have their own 6-bit scale and min. Q5_K (kFive): plus bits 2c
// and 2c+1 of qh[32] as the fifth bits of the two halves. R rows at once (consecutive rows of
// row_bytes) share x's loads and overlap their chains of fmas; see dot_rows_k for why R is 1.
// The scales and mins come out of their packing once per super-block (scales_mins_k4), not
// per pair: 3.9 -> 7.0 GB/s on one core for Q4_K.
template <bool kFive, int R>
JOURNEY_VNNI void dot_rows_q45_k_vnni(float* out, const std::byte* row0, size_t row_bytes, const QuantizedActivations& x) {
    constexpr size_t block_bytes = kFive ? 176 : 144, qs_at = kFive ? 48 : 16;
    __m512 acc[R];
    for (int r = 0; r < R; ++r) acc[r] = _mm512_setzero_ps();
    const __m512i low4 = _mm512_set1_epi8(0x0f);
    for (int64_t k = 0; k < x.n / kSuper; ++k) {
        __m512 d[R], dmin[R];
        __m512i scm[R];
#pragma GCC unroll 4
        for (int r = 0; r < R; ++r) {
            const std::byte* blk = row0 + size_t(r) * row_bytes + size_t(k) * block_bytes;
            d[r] = _mm512_set1_ps(half_at(blk));
            dmin[r] = _mm512_set1_ps(half_at(blk + 2));
            scm[r] = scales_mins_k4(reinterpret_cast<const unsigned char*>(blk + 4));
        }
        for (int c = 0; c < 4; ++c) {
            const int64_t p = 4 * k + c;
            const __m512i xq = _mm512_loadu_si512(x.q.data() + p * 64);
            const __m512i sum4 = _mm512_loadu_si512(x.sum4.data() + p * 16);
            const __m512 dx = _mm512_loadu_ps(x.d_lanes.data() + p * 16);
            // lanes 0-7: sub-block 2c, 8-15: 2c+1; the mins 8 lanes further on
            const __m512i sc_at = _mm512_mask_blend_epi32(0xFF00, _mm512_set1_epi32(2 * c), _mm512_set1_epi32(2 * c + 1));
            const __m512i m_at = _mm512_add_epi32(sc_at, _mm512_set1_epi32(8));
    #pragma GCC unroll 4
        for (int r = 0; r < R; ++r) {
                const auto* b = reinterpret_cast<const unsigned char*>(row0 + size_t(r) * row_bytes + size_t(k) * block_bytes);
                const __m256i q32 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b + qs_at + 32 * c));
                __m512i z = _mm512_maskz_inserti64x4(0xFF, _mm512_castsi256_si512(q32), q32, 1);
                z = _mm512_mask_srli_epi16(z, 0xFFFF0000, z, 4);  // upper half: the high nibbles
                __m512i u = _mm512_and_si512(z, low4);
                if constexpr (kFive) {
                    const __m256i h32 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b + 16));
                    const __m512i h = _mm512_maskz_inserti64x4(0xFF, _mm512_castsi256_si512(h32), h32, 1);
                    const __m512i shifts = _mm512_mask_blend_epi16(0xFFFF0000, _mm512_set1_epi16(short(2 * c)),
                                                                   _mm512_set1_epi16(short(2 * c + 1)));
                    const __m512i bit = _mm512_and_si512(_mm512_srlv_epi16(h, shifts), _mm512_set1_epi8(1));
                    u = _mm512_or_si512(u, _mm512_maskz_slli_epi16(0xFFFFFFFF, bit, 4));
                }
                const __m512i isum = _mm512_dpbusd_epi32(_mm512_setzero_si512(), u, xq);
                const __m512i scv = _mm512_maskz_permutexvar_epi32(0xFFFF, sc_at, scm[r]);
                const __m512i mv = _mm512_maskz_permutexvar_epi32(0xFFFF, m_at, scm[r]);
                acc[r] = _mm512_fmadd_ps(_mm512_maskz_cvtepi32_ps(0xFFFF, _mm512_mullo_epi32(scv, isum)), _mm512_mul_ps(d[r], dx), acc[r]);
                const __m512i negmin = _mm512_sub_epi32(_mm512_setzero_si512(), _mm512_mullo_epi32(mv, sum4));
                acc[r] = _mm512_fmadd_ps(_mm512_maskz_cvtepi32_ps(0xFFFF, negmin), _mm512_mul_ps(dmin[r], dx), acc[r]);
            }
        }
    }
    for (int r = 0; r < R; ++r) out[r] = hsum_lanes(acc[r]);
}

// Q6_K: pair c lies in half h = c / 2 of the super-block; its 64 elements are the low (c even)
// or high (c odd) nibbles of ql[64h .. 64h+63], with two bits of qh[32h .. 32h+31] each (bits
// 0-1 / 2-3 for c even, 4-5 / 6-7 for c odd). Stored as q + 32 (0..63): x's bias -32·Σq
// seeds the sums. Lane l's 16-element sub-block is 4c + l/4. R rows at once, as above.
template <int R>
JOURNEY_VNNI void dot_rows_q6_k_vnni(float* out, const std::byte* row0, size_t row_bytes, const QuantizedActivations& x) {
    __m512 acc[R];
    for (int r = 0; r < R; ++r) acc[r] = _mm512_setzero_ps();
    const __m512i low4 = _mm512_set1_epi8(0x0f), low2 = _mm512_set1_epi8(3);
    const __m512i lane_sub = _mm512_set_epi32(3, 3, 3, 3, 2, 2, 2, 2, 1, 1, 1, 1, 0, 0, 0, 0);
    for (int64_t k = 0; k < x.n / kSuper; ++k) {
        __m512 d[R];
#pragma GCC unroll 4
        for (int r = 0; r < R; ++r) d[r] = _mm512_set1_ps(half_at(row0 + size_t(r) * row_bytes + size_t(k) * 210 + 208));
        for (int c = 0; c < 4; ++c) {
            const int64_t p = 4 * k + c;
            const int h = c / 2, odd = c % 2;
            const __m512i xq = _mm512_loadu_si512(x.q.data() + p * 64);
            const __m512i bias = _mm512_maskz_slli_epi32(0xFFFF, _mm512_sub_epi32(_mm512_setzero_si512(), _mm512_loadu_si512(x.sum4.data() + p * 16)), 5);
            const __m512 dx = _mm512_loadu_ps(x.d_lanes.data() + p * 16);
            const __m512i shifts = _mm512_mask_blend_epi16(0xFFFF0000, _mm512_set1_epi16(short(4 * odd)),
                                                           _mm512_set1_epi16(short(4 * odd + 2)));
    #pragma GCC unroll 4
        for (int r = 0; r < R; ++r) {
                const auto* b = reinterpret_cast<const unsigned char*>(row0 + size_t(r) * row_bytes + size_t(k) * 210);
                __m512i lo = _mm512_loadu_si512(b + 64 * h);
                if (odd) lo = _mm512_srli_epi16(lo, 4);
                lo = _mm512_and_si512(lo, low4);
                const __m256i qh32 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b + 128 + 32 * h));
                const __m512i qh = _mm512_maskz_inserti64x4(0xFF, _mm512_castsi256_si512(qh32), qh32, 1);
                const __m512i hi = _mm512_and_si512(_mm512_srlv_epi16(qh, shifts), low2);
                const __m512i u = _mm512_or_si512(lo, _mm512_slli_epi16(hi, 4));
                const __m512i isum = _mm512_dpbusd_epi32(bias, u, xq);
                int32_t sc4;
                std::memcpy(&sc4, b + 192 + 4 * c, 4);
                const __m512i scv = _mm512_maskz_permutexvar_epi32(0xFFFF, lane_sub, _mm512_maskz_cvtepi8_epi32(0xFFFF, _mm_cvtsi32_si128(sc4)));
                acc[r] = _mm512_fmadd_ps(_mm512_maskz_cvtepi32_ps(0xFFFF, _mm512_mullo_epi32(scv, isum)), _mm512_mul_ps(d[r], dx), acc[r]);
            }
        }
    }
    for (int r = 0; r < R; ++r) out[r] = hsum_lanes(acc[r]);
}

// kRows rows at a time through the VNNI kernels, the rest one by one.
template <int kRows>
void dot_rows_k_vnni(float* out, const Matrix& W, const QuantizedActivations& x, int64_t r0, int64_t r1) {
    const size_t row_bytes = dtype_bytes(W.dtype, uint64_t(W.cols));
    auto rows = [&](auto R, int64_t r) {
        const std::byte* row = W.data + size_t(r) * row_bytes;
        switch (W.dtype) {
            case DType::Q4_K: return dot_rows_q45_k_vnni<false, decltype(R)::value>(out + r, row, row_bytes, x);
            case DType::Q5_K: return dot_rows_q45_k_vnni<true, decltype(R)::value>(out + r, row, row_bytes, x);
            default: return dot_rows_q6_k_vnni<decltype(R)::value>(out + r, row, row_bytes, x);
        }
    };
    int64_t r = r0;
    for (; r + kRows <= r1; r += kRows) rows(std::integral_constant<int, kRows>(), r);
    for (; r < r1; ++r) rows(std::integral_constant<int, 1>(), r);
}

}  // namespace

bool has_k_dot(DType t) { return t == DType::Q4_K || t == DType::Q5_K || t == DType::Q6_K; }

void dot_rows_k(float* out, const Matrix& W, const QuantizedActivations& x, int64_t r0, int64_t r1, bool fast) {
    // One row at a time on either stream shape: on AMD Zen 4 two or four rows at once (sharing
    // x's loads) ran at half the rate of one (Q4_K 3.4-4.7 GB/s against 6.6-7.0 on one core,
    // 13:40 UTC 3 Dec): the interleaved streams cost more than the shared loads save.
    if (fast) return dot_rows_k_vnni<1>(out, W, x, r0, r1);
    const size_t row_bytes = dtype_bytes(W.dtype, uint64_t(W.cols));
    for (int64_t r = r0; r < r1; ++r) {
        const std::byte* row = W.data + size_t(r) * row_bytes;
        switch (W.dtype) {
            case DType::Q4_K: out[r] = dot_row_portable<DType::Q4_K>(row, x); break;
            case DType::Q5_K: out[r] = dot_row_portable<DType::Q5_K>(row, x); break;
            default: out[r] = dot_row_portable<DType::Q6_K>(row, x); break;
        }
    }
}

}  // namespace journey
