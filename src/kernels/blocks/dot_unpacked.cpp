// One-token integer dots for the block types without a kernel of their own (Q4_1, Q5_0, Q5_1,
// Q2_K, Q3_K, IQ4_NL, IQ4_XS): each row is first unpacked, block by block, into int8 quants with
// per-lane integer scales and float multipliers; then the lanes run the arithmetic stated in
// blocks/dot.h (the "unpacked" form), portably, with AVX2 or with AVX-512 VNNI, the same bits.
// Q2_K, Q3_K, IQ4_XS and IQ4_NL on AVX2 and VNNI skip the copy: blocks/dot_direct.cpp decodes
// them straight into the same lanes.
#include "dot_kinds.h"

#include <cmath>
#include <cstring>
#include <immintrin.h>
#include <vector>

#include "journey/kernels/blocks/layout.h"
#include "journey/kernels/half.h"
#include "../avx2_lanes.h"
#include "../avx512_loads.h"

namespace journey {
namespace {

// A row unpacked: w[i] = A_g · S_g · q[i] + B_g · M_g for element i in lane group g = i / 4
// (4 elements; 16 groups per pair of x blocks). Padded with zeros to whole pairs.
struct UnpackedRow {
    std::vector<int8_t> q;
    std::vector<int32_t> S, M;
    std::vector<float> A, B;
    bool has_min = false;
};

// Fill lane groups g0 .. g0 + n/4 with one scale set.
void groups(UnpackedRow& u, int64_t g0, int64_t count, int32_t S, float A, int32_t M = 0, float B = 0.0f) {
    for (int64_t g = g0; g < g0 + count; ++g) u.S[size_t(g)] = S, u.A[size_t(g)] = A, u.M[size_t(g)] = M, u.B[size_t(g)] = B;
}

// One block at element e0 of the row. Each case restates blocks/dequantize.cpp's layout as
// (q, S, A, M, B) with w = A·S·q + B·M exactly as dequantized (up to float rounding).
void unpack_block(DType t, const unsigned char* b, UnpackedRow& u, int64_t e0) {
    int8_t* q = u.q.data() + e0;
    const int64_t g0 = e0 / 4;
    switch (t) {
        case DType::Q4_1:  // w = d·q + m
            for (int j = 0; j < 16; ++j) q[j] = int8_t(b[4 + j] & 0x0f), q[j + 16] = int8_t(b[4 + j] >> 4);
            return groups(u, g0, 8, 1, fp16_to_fp32(b), 1, fp16_to_fp32(b + 2));
        case DType::Q5_0:
        case DType::Q5_1: {  // Q5_0: w = d·(q - 16); Q5_1: w = d·q + m
            const bool min = t == DType::Q5_1;
            const unsigned char* p = b + (min ? 4 : 2);
            uint32_t qh;
            std::memcpy(&qh, p, 4);
            for (int j = 0; j < 16; ++j) {
                q[j] = int8_t(((p[4 + j] & 0x0f) | (((qh >> j) << 4) & 0x10)) - (min ? 0 : 16));
                q[j + 16] = int8_t(((p[4 + j] >> 4) | ((qh >> (j + 12)) & 0x10)) - (min ? 0 : 16));
            }
            return groups(u, g0, 8, 1, fp16_to_fp32(b), min ? 1 : 0, min ? fp16_to_fp32(b + 2) : 0.0f);
        }
        case DType::IQ4_NL:  // w = d·value[nibble]
            for (int j = 0; j < 16; ++j) q[j] = kIq4Values[b[2 + j] & 0x0f], q[j + 16] = kIq4Values[b[2 + j] >> 4];
            return groups(u, g0, 8, 1, fp16_to_fp32(b));
        case DType::IQ4_XS: {  // per 32: w = d·(ls - 32)·value[nibble]
            uint16_t scales_h;
            std::memcpy(&scales_h, b + 2, 2);
            for (int ib = 0; ib < 8; ++ib) {
                const unsigned char* qs = b + 8 + 16 * ib;
                for (int j = 0; j < 16; ++j) q[32 * ib + j] = kIq4Values[qs[j] & 0x0f], q[32 * ib + j + 16] = kIq4Values[qs[j] >> 4];
                const int ls = ((b[4 + ib / 2] >> 4 * (ib % 2)) & 0x0f) | (((scales_h >> 2 * ib) & 3) << 4);
                groups(u, g0 + 8 * ib, 8, ls - 32, fp16_to_fp32(b));
            }
            return;
        }
        case DType::Q2_K:  // per 16: w = d·sc·q - dmin·m; element e: bits 2((e%128)/32) of qs[32(e/128) + e%32]
            for (int e = 0; e < 256; ++e) q[e] = int8_t((b[16 + 32 * (e / 128) + e % 32] >> (2 * ((e % 128) / 32))) & 3);
            for (int s = 0; s < 16; ++s) groups(u, g0 + 4 * s, 4, b[s] & 0x0f, fp16_to_fp32(b + 80), -(b[s] >> 4), fp16_to_fp32(b + 82));
            return;
        case DType::Q3_K: {  // per 16: w = d·(sc - 32)·q, q = 2 low bits as Q2_K, -4 unless hmask bit e/32 of hm[e%32]
            int8_t sc[16];
            scales_q3_k(b + 96, sc);
            for (int e = 0; e < 256; ++e) {
                const int low = (b[32 + 32 * (e / 128) + e % 32] >> (2 * ((e % 128) / 32))) & 3;
                q[e] = int8_t(low - ((b[e % 32] >> (e / 32)) & 1 ? 0 : 4));
            }
            for (int s = 0; s < 16; ++s) groups(u, g0 + 4 * s, 4, sc[s] - 32, fp16_to_fp32(b + 108));
            return;
        }
        default: break;
    }
}

void unpack_row(DType t, const std::byte* row, int64_t n, UnpackedRow& u) {
    const int64_t n_pad = (n + 63) / 64 * 64, block = int64_t(dtype_block(t));
    const size_t block_bytes = dtype_bytes(t, uint64_t(block));
    u.q.assign(size_t(n_pad), 0);
    u.S.assign(size_t(n_pad / 4), 0);
    u.M.assign(size_t(n_pad / 4), 0);
    u.A.assign(size_t(n_pad / 4), 0.0f);
    u.B.assign(size_t(n_pad / 4), 0.0f);
    u.has_min = t == DType::Q4_1 || t == DType::Q5_1 || t == DType::Q2_K;
    const auto* p = reinterpret_cast<const unsigned char*>(row);
    for (int64_t e = 0; e < n; e += block, p += block_bytes) unpack_block(t, p, u, e);
}

float lanes_portable(const UnpackedRow& u, const QuantizedActivations& x) {
    float acc[16] = {};
    for (size_t p = 0; p < u.q.size() / 64; ++p)
        for (int l = 0; l < 16; ++l) {
            const size_t g = 16 * p + size_t(l);
            const int8_t* w = u.q.data() + 4 * g;
            const int8_t* qx = x.q.data() + 4 * g;
            const int32_t isum = w[0] * qx[0] + w[1] * qx[1] + w[2] * qx[2] + w[3] * qx[3];
            const float dx = x.d_lanes[g];
            acc[l] = std::fma(float(u.S[g] * isum), u.A[g] * dx, acc[l]);
            if (u.has_min) acc[l] = std::fma(float(u.M[g] * x.sum4[g]), u.B[g] * dx, acc[l]);
        }
    for (int s = 8; s >= 1; s /= 2)
        for (int l = 0; l < s; ++l) acc[l] += acc[l + s];
    return acc[0];
}

// The same lanes, 16 at a time: w + 128 as u8 against x's int8, seeded with x's -128·Σq.
__attribute__((target("avx512f,avx512bw,avx512vl,avx512vnni,fma,f16c"))) float lanes_vnni(const UnpackedRow& u, const QuantizedActivations& x) {
    __m512 acc = _mm512_setzero_ps();
    for (size_t p = 0; p < u.q.size() / 64; ++p) {
        const __m512i w = _mm512_xor_si512(_mm512_loadu_si512(u.q.data() + 64 * p), _mm512_set1_epi8(static_cast<char>(0x80)));
        const __m512i isum = _mm512_dpbusd_epi32(_mm512_loadu_si512(x.bias_q8_0.data() + 16 * p), w,
                                                 _mm512_loadu_si512(x.q.data() + 64 * p));
        const __m512 dx = _mm512_loadu_ps(x.d_lanes.data() + 16 * p);
        const __m512i S = _mm512_loadu_si512(u.S.data() + 16 * p);
        acc = _mm512_fmadd_ps(_mm512_maskz_cvtepi32_ps(0xFFFF, _mm512_mullo_epi32(S, isum)),
                              _mm512_mul_ps(_mm512_loadu_ps(u.A.data() + 16 * p), dx), acc);
        if (u.has_min) {
            const __m512i M = _mm512_mullo_epi32(_mm512_loadu_si512(u.M.data() + 16 * p), _mm512_loadu_si512(x.sum4.data() + 16 * p));
            acc = _mm512_fmadd_ps(_mm512_maskz_cvtepi32_ps(0xFFFF, M), _mm512_mul_ps(_mm512_loadu_ps(u.B.data() + 16 * p), dx), acc);
        }
    }
    return avx512::hsum16(acc);  // the portable loop's lane order
}

// The same lanes on AVX2, lanes 0-7 and 8-15 of each pair of blocks as two 8-float registers
// (avx2_lanes.h). Each lane's sum of 4 signed products, exactly: vpmaddubsw takes |w| (0..128 as
// u8) against x's quants with w's sign moved onto them (vpsignb; x is -127..127, so the negation
// is exact and w = 0 gives 0), int16 pair sums |·| <= 2 · 128 · 127 < 2^15 (no saturation), then
// vpmaddwd by ones adds the two pairs into the lane's int32. S · isum and M · Σ4 are int32
// products as the portable loop's, and the float steps the same operations per lane in the same
// order (cvtdq2ps, one rounding of A · d_x, fma; then B · d_x, fma), then hsum16 in reduce16's
// order: the same bits.
JOURNEY_AVX2 inline __m256i ld(const void* p) { return _mm256_loadu_si256(static_cast<const __m256i*>(p)); }

JOURNEY_AVX2 float lanes_avx2(const UnpackedRow& u, const QuantizedActivations& x) {
    __m256 acc[2] = {_mm256_setzero_ps(), _mm256_setzero_ps()};
    const __m256i ones = _mm256_set1_epi16(1);
    for (size_t g = 0; g < u.q.size() / 4; g += 8) {  // lane groups g .. g+7: half of a pair of blocks
        const int h = int(g / 8 % 2);
        const __m256i w = ld(u.q.data() + 4 * g), q = ld(x.q.data() + 4 * g);
        const __m256i isum = _mm256_madd_epi16(_mm256_maddubs_epi16(_mm256_abs_epi8(w), _mm256_sign_epi8(q, w)), ones);
        const __m256 dx = _mm256_loadu_ps(x.d_lanes.data() + g);
        acc[h] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(_mm256_mullo_epi32(ld(u.S.data() + g), isum)),
                                 _mm256_mul_ps(_mm256_loadu_ps(u.A.data() + g), dx), acc[h]);
        if (u.has_min)
            acc[h] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(_mm256_mullo_epi32(ld(u.M.data() + g), ld(x.sum4.data() + g))),
                                     _mm256_mul_ps(_mm256_loadu_ps(u.B.data() + g), dx), acc[h]);
    }
    return avx2::hsum16(acc[0], acc[1]);
}

}  // namespace

bool has_unpacked_dot(DType t) {
    switch (t) {
        case DType::Q4_1: case DType::Q5_0: case DType::Q5_1: case DType::Q2_K: case DType::Q3_K:
        case DType::IQ4_NL: case DType::IQ4_XS: return true;
        default: return false;
    }
}

void dot_rows_unpacked(float* out, const Matrix& W, const QuantizedActivations& x, int64_t r0, int64_t r1, DotPath path) {
    if (path == DotPath::vnni && has_direct_dot(W.dtype)) return dot_rows_direct(out, W, x, r0, r1);
    if (path == DotPath::avx2 && has_direct_dot(W.dtype)) return dot_rows_direct_avx2(out, 0, W, &x, 1, r0, r1);
    const size_t row_bytes = dtype_bytes(W.dtype, uint64_t(W.cols));
    thread_local UnpackedRow u;
    for (int64_t r = r0; r < r1; ++r) {
        unpack_row(W.dtype, W.data + size_t(r) * row_bytes, W.cols, u);
        switch (path) {
            case DotPath::vnni: out[r] = lanes_vnni(u, x); break;
            case DotPath::avx2: out[r] = lanes_avx2(u, x); break;
            default: out[r] = lanes_portable(u, x); break;
        }
    }
}

}  // namespace journey
