// K-quant rows (Q4_K, Q5_K, Q6_K) · Q8_K-quantized activations (the arithmetic is stated in
// include/journey/kernels/quant_dot.h). The portable loop is the definition; the AVX-512 VNNI
// kernel does the same integer sums and the same float operations per lane, 16 lanes at a time,
// so the two give the same bits.
#include "quant_dot_k.h"

#include <cmath>
#include <cstring>
#include <immintrin.h>

#include "dequant_blocks.h"
#include "journey/kernels/convert.h"
#include "journey/kernels/gemv.h"

namespace journey {
namespace {

constexpr int64_t kSuper = 256;  // elements per K-quant super-block: 4 pairs of x blocks

float half_at(const std::byte* p) {
    uint16_t h;
    std::memcpy(&h, p, 2);
    return f16_to_f32(h);
}

// One super-block, unpacked for the portable loop: q[256] as stored (Q4_K 0..15, Q5_K 0..31,
// Q6_K q + 32 = 0..63), the integer scale of each group of 4 elements, the mins of the eight
// sub-blocks (Q4_K, Q5_K), Q6_K's sixteen scales, and d, dmin.
struct Unpacked {
    uint8_t q[kSuper];
    int32_t scale[kSuper / 4], min[8], sc16[16];
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
            u.q[64 * i + l] = uint8_t((qs[32 * i + l] & 0x0f) | (kFive ? ((qh[l] >> (2 * i)) & 1) << 4 : 0));
            u.q[64 * i + 32 + l] = uint8_t((qs[32 * i + l] >> 4) | (kFive ? ((qh[l] >> (2 * i + 1)) & 1) << 4 : 0));
        }
    for (int s = 0; s < 8; ++s) {  // sub-block s: elements 32s .. 32s+31, groups of 4 8s .. 8s+7
        uint8_t sc, m;
        scale_min_k4(s, b + 4, sc, m);
        for (int g = 8 * s; g < 8 * s + 8; ++g) u.scale[g] = sc;
        u.min[s] = m;
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
            uint8_t* q = u.q + 128 * h;
            q[l] = uint8_t((ql[l] & 0x0f) | ((qh[l] & 3) << 4));
            q[l + 32] = uint8_t((ql[l + 32] & 0x0f) | (((qh[l] >> 2) & 3) << 4));
            q[l + 64] = uint8_t((ql[l] >> 4) | (((qh[l] >> 4) & 3) << 4));
            q[l + 96] = uint8_t((ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4));
        }
    for (int j = 0; j < 16; ++j) u.sc16[j] = sc[j];
    for (int g = 0; g < kSuper / 4; ++g) u.scale[g] = sc[g / 4];  // a scale per 16 elements
}

template <DType D>
constexpr size_t kBlockBytes = D == DType::Q4_K ? 144 : D == DType::Q5_K ? 176 : 210;

// lane j += lane j+2, then +1: the min lanes' fixed order
float reduce4(const float* a) { return (a[0] + a[2]) + (a[1] + a[3]); }

float reduce16(float* a) {
    for (int s = 8; s >= 1; s /= 2)
        for (int l = 0; l < s; ++l) a[l] += a[l + s];
    return a[0];
}

template <DType D>
float dot_row_portable(const std::byte* row, const QuantizedActivations& x) {
    constexpr bool with_min = D != DType::Q6_K;
    float acc[16] = {}, accm[4] = {};
    Unpacked u;
    for (int64_t k = 0; k < x.n / kSuper; ++k) {
        const auto* b = reinterpret_cast<const unsigned char*>(row + size_t(k) * kBlockBytes<D>);
        if constexpr (D == DType::Q6_K) unpack_q6_k(b, u);
        else unpack_q45_k<D == DType::Q5_K>(b, u);
        const int8_t* qx = x.q.data() + k * kSuper;
        int32_t isum[16] = {};
        for (int v = 0; v < 4; ++v)  // elements 64v .. 64v+63; lane l: 64v+4l .. 64v+4l+3
            for (int l = 0; l < 16; ++l) {
                const int g = 16 * v + l;
                const int32_t s = u.q[4 * g] * qx[4 * g] + u.q[4 * g + 1] * qx[4 * g + 1] + u.q[4 * g + 2] * qx[4 * g + 2] +
                                  u.q[4 * g + 3] * qx[4 * g + 3];
                isum[l] += u.scale[g] * s;
            }
        if constexpr (D == DType::Q6_K) {
            const int16_t* s16 = x.sum16.data() + k * 16;
            for (int l = 0; l < 8; ++l) isum[l] -= 32 * (u.sc16[2 * l] * s16[2 * l] + u.sc16[2 * l + 1] * s16[2 * l + 1]);
        }
        const float dx = x.d[size_t(k)], dd = u.d * dx;
        for (int l = 0; l < 16; ++l) acc[l] = std::fma(float(isum[l]), dd, acc[l]);
        if constexpr (with_min) {
            const int16_t* s32 = x.sum32.data() + k * 8;
            const float dm = u.dmin * dx;
            for (int j = 0; j < 4; ++j)
                accm[j] = std::fma(float(u.min[2 * j] * s32[2 * j] + u.min[2 * j + 1] * s32[2 * j + 1]), dm, accm[j]);
        }
    }
    return reduce16(acc) - reduce4(accm);
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
// bytes 0-3 (scales) and 4-7 (mins).
JOURNEY_VNNI inline __m128i scales_mins_k4(const unsigned char* q) {
    uint32_t w[3];
    std::memcpy(w, q, 12);
    const uint32_t six = 0x3f3f3f3f, four = 0x0f0f0f0f, two = 0x03030303;
    // in registers (a store of four words and a 16-byte load would miss store forwarding)
    return _mm_set_epi32(int(((w[2] >> 4) & four) | (((w[1] >> 6) & two) << 4)), int(w[1] & six),
                         int((w[2] & four) | (((w[0] >> 6) & two) << 4)), int(w[0] & six));
}

JOURNEY_VNNI inline void store_lanes(float* lanes, __m512 a) { _mm512_storeu_ps(lanes, a); }

// The lines of a super-block kStreamAhead bytes on in the row stream (gemv.h; past the
// matrix's end a prefetch is a no-op).
template <size_t kBytes>
inline void ask_ahead(const unsigned char* b) {
    for (size_t o = 0; o < kBytes; o += 64) _mm_prefetch(reinterpret_cast<const char*>(b + kStreamAhead + o), _MM_HINT_T0);
}

// A half by F16C (the same value as f16_to_f32; the software one was ~10% of Q6_K's time).
JOURNEY_VNNI inline float half_f16c(const unsigned char* p) {
    uint16_t h;
    std::memcpy(&h, p, 2);
    return _cvtsh_ss(h);
}

// Q4_K: chunk c's 64 elements are the low then the high nibbles of 32 bytes (sub-blocks 2c and
// 2c+1). Q5_K (kFive): plus bits 2c and 2c+1 of qh[32] as their fifth bits.
template <bool kFive>
JOURNEY_VNNI float dot_row_q45_k_vnni(const std::byte* row, const QuantizedActivations& x) {
    constexpr size_t block_bytes = kFive ? 176 : 144, qs_at = kFive ? 48 : 16;
    __m512 acc = _mm512_setzero_ps();
    __m128 accm = _mm_setzero_ps();
    const __m512i low4 = _mm512_set1_epi8(0x0f), five = _mm512_set1_epi8(0x10);
    for (int64_t k = 0; k < x.n / kSuper; ++k) {
        const auto* b = reinterpret_cast<const unsigned char*>(row + size_t(k) * block_bytes);
        ask_ahead<block_bytes>(b);
        const float dx = x.d[size_t(k)];
        const __m128i scm = scales_mins_k4(b + 4);
        const __m512i sc = _mm512_maskz_broadcast_i32x4(0xFFFF, _mm_cvtepu8_epi16(scm));  // scales as int16, each 16-byte lane
        const __m128i mins = _mm_cvtepu8_epi16(_mm_srli_si128(scm, 8));
        const __m128i msum = _mm_madd_epi16(mins, _mm_loadu_si128(reinterpret_cast<const __m128i*>(x.sum32.data() + 8 * k)));
        accm = _mm_fmadd_ps(_mm_cvtepi32_ps(msum), _mm_set1_ps(half_f16c(b + 2) * dx), accm);
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
        const float dd = half_f16c(b) * dx;
        acc = _mm512_fmadd_ps(_mm512_maskz_cvtepi32_ps(0xFFFF, isum), _mm512_set1_ps(dd), acc);
    }
    alignas(64) float lanes[16], mlanes[4];
    store_lanes(lanes, acc);
    _mm_storeu_ps(mlanes, accm);
    return reduce16(lanes) - reduce4(mlanes);
}

// Q6_K: half h of the super-block (elements 128h .. 128h+127) is ql[64h .. 64h+63], low nibbles
// for elements 0-63 and high nibbles for 64-127 of it, with two bits each from qh[32h .. 32h+31]
// (bits 0-1 / 2-3 for the low nibbles of bytes 0-31 / 32-63, bits 4-5 / 6-7 for the high).
JOURNEY_VNNI float dot_row_q6_k_vnni(const std::byte* row, const QuantizedActivations& x) {
    __m512 acc = _mm512_setzero_ps();
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
        const float dd = half_f16c(b + 208) * x.d[size_t(k)];
        acc = _mm512_fmadd_ps(_mm512_maskz_cvtepi32_ps(0xFFFF, isum), _mm512_set1_ps(dd), acc);
    }
    alignas(64) float lanes[16];
    store_lanes(lanes, acc);
    return reduce16(lanes);
}

}  // namespace

bool has_k_dot(DType t) { return t == DType::Q4_K || t == DType::Q5_K || t == DType::Q6_K; }

void dot_rows_k(float* out, const Matrix& W, const QuantizedActivations& x, int64_t r0, int64_t r1, bool fast) {
    // One row at a time: on AMD Zen 4 two or four rows at once (sharing x's loads) ran at half
    // the rate of one (13:40 UTC 3 Dec): the interleaved streams cost more than the shared loads save.
    // Each super-block asks for the lines kStreamAhead bytes on (gemv.h).
    const size_t row_bytes = dtype_bytes(W.dtype, uint64_t(W.cols));
    for (int64_t r = r0; r < r1; ++r) {
        const std::byte* row = W.data + size_t(r) * row_bytes;
        switch (W.dtype) {
            case DType::Q4_K: out[r] = fast ? dot_row_q45_k_vnni<false>(row, x) : dot_row_portable<DType::Q4_K>(row, x); break;
            case DType::Q5_K: out[r] = fast ? dot_row_q45_k_vnni<true>(row, x) : dot_row_portable<DType::Q5_K>(row, x); break;
            default: out[r] = fast ? dot_row_q6_k_vnni(row, x) : dot_row_portable<DType::Q6_K>(row, x); break;
        }
    }
}

}  // namespace journey
