// AVX-512 block dequantization (blocks/dequantize.h). Each function mirrors its scalar twin in
// blocks/dequantize.cpp: the block's float scales are computed as there (scalar, same operands),
// and each element gets the same one or two float operations (mul, then sub for the K-quant
// mins) on 16 lanes at a time. Integer unpacking is exact in any order. The file is built with
// -ffp-contract=off (CMakeLists.txt): a mul followed by a sub must not become one fma.
#include "journey/kernels/blocks/dequantize.h"

#include <cstring>
#include <immintrin.h>

#include "journey/kernels/blocks/layout.h"
#include "journey/kernels/half.h"
#include "../avx512_loads.h"

namespace journey {
namespace {

// Full masks on the maskz forms: the plain intrinsics start from _mm512_undefined_*, which GCC 12
// reports as maybe-uninitialized (as in avx512_loads.h). The masked mul and sub are the same
// IEEE operations, and being builtins they are never fused into an fma.
constexpr __mmask16 kAll = 0xffff;

// 16 bytes at p, zero-extended to 16 int32 lanes
JOURNEY_AVX512 inline __m512i u8x16(const unsigned char* p) {
    return _mm512_maskz_cvtepu8_epi32(kAll, _mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
}

JOURNEY_AVX512 inline __m512i low4(__m512i v) { return _mm512_maskz_and_epi32(kAll, v, _mm512_set1_epi32(0x0f)); }
JOURNEY_AVX512 inline __m512i high4(__m512i v) { return _mm512_maskz_srli_epi32(kAll, v, 4); }

// Q8_0: y = float(q) * d
JOURNEY_AVX512 void q8_0(const unsigned char* b, float* y) {
    const __m512 d = _mm512_set1_ps(fp16_to_fp32(b));
    for (int j = 0; j < 32; j += 16) {
        const __m512i q = _mm512_maskz_cvtepi8_epi32(kAll, _mm_loadu_si128(reinterpret_cast<const __m128i*>(b + 2 + j)));
        _mm512_storeu_ps(y + j, _mm512_maskz_mul_ps(kAll, _mm512_maskz_cvtepi32_ps(kAll, q), d));
    }
}

// Q4_0: y = float(nibble - 8) * d
JOURNEY_AVX512 void q4_0(const unsigned char* b, float* y) {
    const __m512 d = _mm512_set1_ps(fp16_to_fp32(b));
    const __m512i qs = u8x16(b + 2), eight = _mm512_set1_epi32(8);
    _mm512_storeu_ps(y, _mm512_maskz_mul_ps(kAll, _mm512_maskz_cvtepi32_ps(kAll, _mm512_maskz_sub_epi32(kAll, low4(qs), eight)), d));
    _mm512_storeu_ps(y + 16, _mm512_maskz_mul_ps(kAll, _mm512_maskz_cvtepi32_ps(kAll, _mm512_maskz_sub_epi32(kAll, high4(qs), eight)), d));
}

// Q4_K / Q5_K: y = (d * sc) * q - (dmin * m), q = nibble (+ 16 for Q5_K's fifth bit)
template <bool kFive>
JOURNEY_AVX512 void q45_k(const unsigned char* b, float* y) {
    const float d = fp16_to_fp32(b), dmin = fp16_to_fp32(b + 2);
    const unsigned char* scales = b + 4;
    const unsigned char* qh = b + 16;
    const unsigned char* ql = b + (kFive ? 48 : 16);
    __m512i h[2];
    if constexpr (kFive) h[0] = u8x16(qh), h[1] = u8x16(qh + 16);
    for (int is = 0; is < 8; is += 2, ql += 32) {
        uint8_t sc, m;
        scale_min_k4(is, scales, sc, m);
        const __m512 d1 = _mm512_set1_ps(d * float(sc)), m1 = _mm512_set1_ps(dmin * float(m));
        scale_min_k4(is + 1, scales, sc, m);
        const __m512 d2 = _mm512_set1_ps(d * float(sc)), m2 = _mm512_set1_ps(dmin * float(m));
        for (int half = 0; half < 2; ++half) {  // elements l = 16 half .. 16 half + 15 of the 32
            const __m512i q = u8x16(ql + 16 * half);
            __m512i lo = low4(q), hi = high4(q);
            if constexpr (kFive) {  // bit is of qh[l] for the low nibble, bit is + 1 for the high
                const __m512i one = _mm512_set1_epi32(1);
                lo = _mm512_maskz_or_epi32(kAll, lo, _mm512_maskz_slli_epi32(kAll, _mm512_maskz_and_epi32(kAll, _mm512_maskz_srli_epi32(kAll, h[half], unsigned(is)), one), 4));
                hi = _mm512_maskz_or_epi32(kAll, hi, _mm512_maskz_slli_epi32(kAll, _mm512_maskz_and_epi32(kAll, _mm512_maskz_srli_epi32(kAll, h[half], unsigned(is + 1)), one), 4));
            }
            _mm512_storeu_ps(y + 16 * half, _mm512_maskz_sub_ps(kAll, _mm512_maskz_mul_ps(kAll, d1, _mm512_maskz_cvtepi32_ps(kAll, lo)), m1));
            _mm512_storeu_ps(y + 32 + 16 * half, _mm512_maskz_sub_ps(kAll, _mm512_maskz_mul_ps(kAll, d2, _mm512_maskz_cvtepi32_ps(kAll, hi)), m2));
        }
        y += 64;
    }
}

// Q6_K's q - 32 as float: 4 low bits, and the high 2 in bits 0-1 of high2
JOURNEY_AVX512 inline __m512 q6(__m512i low, __m512i high2) {
    const __m512i q = _mm512_maskz_or_epi32(kAll, low, _mm512_maskz_slli_epi32(kAll, _mm512_maskz_and_epi32(kAll, high2, _mm512_set1_epi32(3)), 4));
    return _mm512_maskz_cvtepi32_ps(kAll, _mm512_maskz_sub_epi32(kAll, q, _mm512_set1_epi32(32)));
}

// Q6_K: y = (d * sc) * (q - 32)
JOURNEY_AVX512 void q6_k(const unsigned char* b, float* y) {
    const unsigned char* ql = b;
    const unsigned char* qh = b + 128;
    const auto* sc = reinterpret_cast<const int8_t*>(b + 192);
    const float d = fp16_to_fp32(b + 208);
    for (int n = 0; n < 256; n += 128, y += 128, ql += 64, qh += 32, sc += 8) {
        for (int is = 0; is < 2; ++is) {  // l = 16 is .. 16 is + 15
            const int l = 16 * is;
            const __m512i a = u8x16(ql + l), c = u8x16(ql + l + 32), h = u8x16(qh + l);
            _mm512_storeu_ps(y + l, _mm512_maskz_mul_ps(kAll, _mm512_set1_ps(d * float(sc[is])), q6(low4(a), h)));
            _mm512_storeu_ps(y + l + 32, _mm512_maskz_mul_ps(kAll, _mm512_set1_ps(d * float(sc[is + 2])), q6(low4(c), _mm512_maskz_srli_epi32(kAll, h, 2))));
            _mm512_storeu_ps(y + l + 64, _mm512_maskz_mul_ps(kAll, _mm512_set1_ps(d * float(sc[is + 4])), q6(high4(a), _mm512_maskz_srli_epi32(kAll, h, 4))));
            _mm512_storeu_ps(y + l + 96, _mm512_maskz_mul_ps(kAll, _mm512_set1_ps(d * float(sc[is + 6])), q6(high4(c), _mm512_maskz_srli_epi32(kAll, h, 6))));
        }
    }
}

template <void (*F)(const unsigned char*, float*)>
JOURNEY_AVX512 void each_block(const unsigned char* src, float* dst, int64_t nblocks, size_t block_bytes, int64_t block) {
    for (int64_t i = 0; i < nblocks; ++i, src += block_bytes, dst += block) F(src, dst);
}

}  // namespace

bool dequant_avx512_has(DType t) {
    switch (t) {
        case DType::Q8_0:
        case DType::Q4_0:
        case DType::Q4_K:
        case DType::Q5_K:
        case DType::Q6_K: return true;
        default: return false;
    }
}

void dequantize_blocks_avx512(DType t, const unsigned char* src, float* dst, int64_t nblocks) {
    const auto block = int64_t(dtype_block(t));
    const size_t bb = dtype_bytes(t, uint64_t(block));
    switch (t) {
        case DType::Q8_0: return each_block<q8_0>(src, dst, nblocks, bb, block);
        case DType::Q4_0: return each_block<q4_0>(src, dst, nblocks, bb, block);
        case DType::Q4_K: return each_block<q45_k<false>>(src, dst, nblocks, bb, block);
        case DType::Q5_K: return each_block<q45_k<true>>(src, dst, nblocks, bb, block);
        case DType::Q6_K: return each_block<q6_k>(src, dst, nblocks, bb, block);
        default:
            for (int64_t i = 0; i < nblocks; ++i, src += bb, dst += block) dequantize_block(t, src, dst);
    }
}

}  // namespace journey
