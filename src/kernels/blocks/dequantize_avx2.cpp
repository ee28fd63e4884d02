// AVX2 block dequantization (blocks/dequantize.h) for gemm's panels on CPUs without AVX-512:
// Q8_0, Q4_0 and Q6_K, 8 lanes at a time. Each mirrors its scalar twin in blocks/dequantize.cpp:
// the block's float scale computed as there (scalar, same operands), then the same one float
// multiply per element; integer unpacking is exact in any order. Only multiplies, so nothing
// could be fused, but the file is built with -ffp-contract=off like dequantize_avx512.cpp
// (CMakeLists.txt) so that a later edit cannot change that silently.
// (Q4_K prompts take the integer dots, not gemm; Q5_K's mul then sub is left to the scalar
// reference, whose build may fuse it: its bits are whatever dequantize_block gives.)
#include "journey/kernels/blocks/dequantize.h"

#include <immintrin.h>

#include "journey/kernels/half.h"
#include "../avx2_lanes.h"

namespace journey {
namespace {

// 8 bytes at p, zero-extended to 8 int32 lanes
JOURNEY_AVX2 inline __m256i u8x8(const unsigned char* p) {
    return _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p)));
}

// Q8_0: y = float(q) * d
JOURNEY_AVX2 void q8_0(const unsigned char* b, float* y) {
    const __m256 d = _mm256_set1_ps(fp16_to_fp32(b));
    for (int j = 0; j < 32; j += 8) {
        const __m256i q = _mm256_cvtepi8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(b + 2 + j)));
        _mm256_storeu_ps(y + j, _mm256_mul_ps(_mm256_cvtepi32_ps(q), d));
    }
}

// Q4_0: y = float(nibble - 8) * d; byte j holds element j (low nibble) and j + 16 (high)
JOURNEY_AVX2 void q4_0(const unsigned char* b, float* y) {
    const __m256 d = _mm256_set1_ps(fp16_to_fp32(b));
    const __m256i eight = _mm256_set1_epi32(8), low = _mm256_set1_epi32(0x0f);
    for (int j = 0; j < 16; j += 8) {
        const __m256i q = u8x8(b + 2 + j);
        _mm256_storeu_ps(y + j, _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_sub_epi32(_mm256_and_si256(q, low), eight)), d));
        _mm256_storeu_ps(y + 16 + j, _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_sub_epi32(_mm256_srli_epi32(q, 4), eight)), d));
    }
}

// Q6_K's q - 32 as float: 4 low bits, and the high 2 in bits 0-1 of high2
JOURNEY_AVX2 inline __m256 q6(__m256i low4, __m256i high2) {
    const __m256i q = _mm256_or_si256(low4, _mm256_slli_epi32(_mm256_and_si256(high2, _mm256_set1_epi32(3)), 4));
    return _mm256_cvtepi32_ps(_mm256_sub_epi32(q, _mm256_set1_epi32(32)));
}

// Q6_K: y = (d * sc) * (q - 32); per 128 elements, element l < 32 from ql[l] low | qh[l] bits
// 0-1, l + 32 ql[l + 32] low | bits 2-3, l + 64 ql[l] high | bits 4-5, l + 96 ql[l + 32] high
// | bits 6-7, with scale sc[l / 16 + 0, 2, 4, 6].
JOURNEY_AVX2 void q6_k(const unsigned char* b, float* y) {
    const unsigned char* ql = b;
    const unsigned char* qh = b + 128;
    const auto* sc = reinterpret_cast<const int8_t*>(b + 192);
    const float d = fp16_to_fp32(b + 208);
    const __m256i low = _mm256_set1_epi32(0x0f);
    for (int n = 0; n < 256; n += 128, y += 128, ql += 64, qh += 32, sc += 8) {
        for (int l = 0; l < 32; l += 8) {
            const int is = l / 16;
            const __m256i a = u8x8(ql + l), c = u8x8(ql + l + 32), h = u8x8(qh + l);
            _mm256_storeu_ps(y + l, _mm256_mul_ps(_mm256_set1_ps(d * float(sc[is])), q6(_mm256_and_si256(a, low), h)));
            _mm256_storeu_ps(y + l + 32, _mm256_mul_ps(_mm256_set1_ps(d * float(sc[is + 2])), q6(_mm256_and_si256(c, low), _mm256_srli_epi32(h, 2))));
            _mm256_storeu_ps(y + l + 64, _mm256_mul_ps(_mm256_set1_ps(d * float(sc[is + 4])), q6(_mm256_srli_epi32(a, 4), _mm256_srli_epi32(h, 4))));
            _mm256_storeu_ps(y + l + 96, _mm256_mul_ps(_mm256_set1_ps(d * float(sc[is + 6])), q6(_mm256_srli_epi32(c, 4), _mm256_srli_epi32(h, 6))));
        }
    }
}

template <void (*F)(const unsigned char*, float*)>
JOURNEY_AVX2 void each_block(const unsigned char* src, float* dst, int64_t nblocks, size_t block_bytes, int64_t block) {
    for (int64_t i = 0; i < nblocks; ++i, src += block_bytes, dst += block) F(src, dst);
}

}  // namespace

bool dequant_avx2_has(DType t) { return t == DType::Q8_0 || t == DType::Q4_0 || t == DType::Q6_K; }

void dequantize_blocks_avx2(DType t, const unsigned char* src, float* dst, int64_t nblocks) {
    const auto block = int64_t(dtype_block(t));
    const size_t bb = dtype_bytes(t, uint64_t(block));
    switch (t) {
        case DType::Q8_0: return each_block<q8_0>(src, dst, nblocks, bb, block);
        case DType::Q4_0: return each_block<q4_0>(src, dst, nblocks, bb, block);
        case DType::Q6_K: return each_block<q6_k>(src, dst, nblocks, bb, block);
        default:
            for (int64_t i = 0; i < nblocks; ++i, src += bb, dst += block) dequantize_block(t, src, dst);
    }
}

}  // namespace journey
