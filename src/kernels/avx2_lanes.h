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

// The several-token kernels' weights: a block of rows is read by every token tile in turn, the
// first from memory, the others from L1 or L2; memory would sit idle through the others. So the
// next block (the bytes just past this one) is asked for into L2 while this one is read, paced
// over all its token tiles: each pass of a chain (or of a block's lo or hi) reports the weight
// bytes it will read (`read`), and a line is asked for every 64 x tiles of them, so the next
// block's lines have all been asked for when this block's last tile ends. Until 7 Dec only the
// first token tile asked (32 KiB on, a line a step, the cursor in memory: a load and a store a
// step), and the other tiles ran with memory idle: Llama 3.2 1B F16 --parallel 16, 2 threads,
// journey bench -n 16 on the loaded host, 22.8 and 21.5 tok/s before, 25.3 and 23.8 after;
// --parallel 4 14.9, 15.7 before, 17.8, 17.7 after. The next block two blocks on was no better,
// the current block (no lead) slower; prefetcht2 or prefetchnta in place of prefetcht1 alike.
struct Ahead {
    const std::byte* p;    // the next line to ask for
    const std::byte* end;  // the end of the next block
    size_t credit = 0;     // bytes read since the last line asked for
    size_t quantum;        // bytes read a line asked for: 64 x token tiles
    // The block [begin, begin + bytes), read by `tiles` token tiles: asks for the next block.
    Ahead(const std::byte* begin, size_t bytes, int tiles) : p(begin + bytes), end(begin + 2 * bytes), quantum(64 * size_t(tiles)) {}
    void read(size_t bytes) {
        credit += bytes;
        for (; credit >= quantum && p < end; credit -= quantum, p += 64) prefetch_l2(p);  // past the matrix: a no-op
    }
};

// The token tiles avx2::token_tile makes of T tokens.
inline int token_tiles(int T) {
    int k = 0;
    for (int t = 0; t < T; t += token_tile(T, t)) ++k;
    return k;
}

}  // namespace avx2
}  // namespace journey
