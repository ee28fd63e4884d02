// AVX-512 helpers shared by our matrix kernels (gemv.cpp, gemm.cpp). Functions carry their own
// target attribute, so the rest of the binary runs on any x86-64; callers check the CPU first.
#pragma once
#include <cstddef>
#include <cstdint>
#include <immintrin.h>

#include "journey/kernels/matrix.h"

#define JOURNEY_AVX512 __attribute__((target("avx512f,avx512bw,avx512vl,fma,f16c")))

namespace journey::avx512 {

// The lanes of the first `left` elements of a 16-wide step (none when left <= 0).
JOURNEY_AVX512 inline __mmask16 tail_mask(int64_t left) {
    return left >= 16 ? __mmask16(0xffff) : left <= 0 ? __mmask16(0) : __mmask16((1u << left) - 1);
}

// 16 consecutive elements of a float dtype at p (those in mask m; the others 0) as float, exactly.
// The maskz forms with a full mask: the plain ones start from _mm512_undefined_*, which GCC 12
// reports as maybe-uninitialized.
template <DType D>
JOURNEY_AVX512 inline __m512 load16(const std::byte* p, __mmask16 m) {
    static_assert(D == DType::F32 || D == DType::F16 || D == DType::BF16);
    if constexpr (D == DType::F32) {
        return _mm512_maskz_loadu_ps(m, p);
    } else {
        const __m256i h = _mm256_maskz_loadu_epi16(m, p);
        if constexpr (D == DType::F16) return _mm512_maskz_cvtph_ps(0xffff, h);
        else return _mm512_castsi512_ps(_mm512_maskz_slli_epi32(0xffff, _mm512_maskz_cvtepu16_epi32(0xffff, h), 16));
    }
}

// load16 with all 16 lanes, from an unmasked load: GCC 12 treats a masked load as a read of any
// memory, so a loop with one keeps its register sums in memory too, storing every one of them
// every step (the several-token F16 tiles: 24 stores per 64 inputs).
template <DType D>
JOURNEY_AVX512 inline __m512 load16_full(const std::byte* p) {
    static_assert(D == DType::F16 || D == DType::BF16);
    const __m256i h = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
    if constexpr (D == DType::F16) return _mm512_maskz_cvtph_ps(0xffff, h);
    else return _mm512_castsi512_ps(_mm512_maskz_slli_epi32(0xffff, _mm512_maskz_cvtepu16_epi32(0xffff, h), 16));
}

// The portable kernels' reduce16 in registers: lane l += lane l+8, +4, +2, +1 (float + is
// commutative, so each step is the same sum as in the portable loop). Summing the lanes
// through memory instead (a vector store, then scalar loads and adds) waits on the store for
// every row: at GPT-2's 768-input Q8_0 rows that loop took half the kernel's time.
JOURNEY_AVX512 inline float hsum16(__m512 a) {
    // (maskz forms with a full mask: the plain ones start from an undefined register, which
    // GCC 12 reports as maybe-uninitialized)
    const __m512d d = _mm512_castps_pd(a);
    const __m256 s8 = _mm256_add_ps(_mm256_castpd_ps(_mm512_maskz_extractf64x4_pd(0xf, d, 0)),
                                    _mm256_castpd_ps(_mm512_maskz_extractf64x4_pd(0xf, d, 1)));
    const __m128 s4 = _mm_add_ps(_mm256_castps256_ps128(s8), _mm256_extractf128_ps(s8, 1));
    const __m128 s2 = _mm_add_ps(s4, _mm_movehl_ps(s4, s4));
    return _mm_cvtss_f32(_mm_add_ss(s2, _mm_shuffle_ps(s2, s2, 1)));
}

inline void prefetch(const std::byte* p) { _mm_prefetch(reinterpret_cast<const char*>(p), _MM_HINT_T0); }
inline void prefetch_l2(const std::byte* p) { _mm_prefetch(reinterpret_cast<const char*>(p), _MM_HINT_T1); }

}  // namespace journey::avx512
