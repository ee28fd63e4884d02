// AVX2 helpers shared by our kernels for CPUs without AVX-512 (AMD Zen 2/3, Intel's client cores
// before and after AVX-512): the portable loops' 16 lanes as two 8-float registers, lo (lanes
// 0..7) and hi (lanes 8..15), so every lane does the portable loop's operations in its order and
// the result has the same bits. Functions carry their own target attribute (AVX2, FMA, F16C):
// the rest of the binary runs on any x86-64; callers check avx2_kernels() first.
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <immintrin.h>

#include "journey/kernels/matrix.h"
#include "avx512_loads.h"

#define JOURNEY_AVX2 __attribute__((target("avx2,fma,f16c")))

namespace journey {

// The AVX2 kernels run: the CPU has AVX2, FMA and F16C, AVX-512 is absent or limited away
// (force_avx2_kernels), and the portable kernels are not forced (gemv.cpp).
bool avx2_kernels();

namespace avx2 {

// 8 consecutive elements of a float dtype at p, exactly as float.
template <DType D>
JOURNEY_AVX2 inline __m256 load8(const std::byte* p) {
    static_assert(D == DType::F32 || D == DType::F16 || D == DType::BF16);
    if constexpr (D == DType::F32) {
        return _mm256_loadu_ps(reinterpret_cast<const float*>(p));
    } else {
        const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
        if constexpr (D == DType::F16) return _mm256_cvtph_ps(h);
        else return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16));
    }
}

// The first n (0..8) elements of a float dtype at p (the rest 0), nothing past them read.
template <DType D>
JOURNEY_AVX2 inline __m256 load8_part(const std::byte* p, int64_t n) {
    constexpr size_t es = D == DType::F32 ? 4 : 2;
    alignas(32) std::byte buf[32] = {};
    if (n > 0) std::memcpy(buf, p, static_cast<size_t>(n < 8 ? n : 8) * es);
    return load8<D>(buf);
}

// The first n (0..8) floats at p, the rest 0.
JOURNEY_AVX2 inline __m256 loadf_part(const float* p, int64_t n) {
    alignas(32) float buf[8] = {};
    if (n > 0) std::memcpy(buf, p, static_cast<size_t>(n < 8 ? n : 8) * 4);
    return _mm256_load_ps(buf);
}

// The portable kernels' reduce16 (lanes.h) on lanes lo | hi: lane l += lane l+8, +4, +2, +1.
JOURNEY_AVX2 inline float hsum16(__m256 lo, __m256 hi) {
    const __m256 s8 = _mm256_add_ps(lo, hi);
    const __m128 s4 = _mm_add_ps(_mm256_castps256_ps128(s8), _mm256_extractf128_ps(s8, 1));
    const __m128 s2 = _mm_add_ps(s4, _mm_movehl_ps(s4, s4));
    return _mm_cvtss_f32(_mm_add_ss(s2, _mm_shuffle_ps(s2, s2, 1)));
}

// Several tokens' kernels (gemv_tokens, dot_rows_tokens) take tokens in tiles: the tile starting
// at token t0 of T takes 4, the last 1 .. 3 (5 left: 3 and 2, not 4 and 1, whose one token
// leaves a tile too few independent sums).
inline int token_tile(int T, int t0) {
    const int left = T - t0;
    return left == 5 ? 3 : left < 4 ? left : 4;
}

// The prefetches carry no target: the AVX-512 header's serve both.
using avx512::prefetch;
using avx512::prefetch_l2;

// The several-token kernels' weights, read from memory by the first token tile of each block of
// rows: a cursor kAhead bytes on in the stream, a block's share of which is asked for into L2 a
// few lines at each step (at least as many as the step reads), ahead of the tiles. The tiles
// read a block's rows side by side, each row's lines out of order: asking for the lines
// kStreamAheadL2 on in each row instead, as the one-token rows do, a 2-token product of GPT-2's
// 77 MB F16 head took 15-17 ms on one thread (one token: 6.3-7), with the cursor 16 to 32 KiB
// on 7.6-8.9; 48 KiB and more was slower at 8192 inputs a row. Asking at exactly the rate the
// step reads (each line once the stream enters it) was faster still on one thread but slower
// on two (GPT-2 small's F16 products, 16 tokens: 76.6 against 68.4 ms).
constexpr size_t kAhead = 32768;
struct Ahead {
    const std::byte* p;    // the next line to ask for
    const std::byte* end;  // the end of the block's share
    // The rows [begin, begin + bytes) being read: their share kAhead bytes on.
    Ahead(const std::byte* begin, size_t bytes) : p(begin + kAhead), end(begin + kAhead + bytes) {}
    void ask(int lines) {
        for (int k = 0; k < lines && p < end; ++k, p += 64) prefetch_l2(p);  // past the matrix: a no-op
    }
};

}  // namespace avx2
}  // namespace journey
