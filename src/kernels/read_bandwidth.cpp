#include "journey/kernels/read_bandwidth.h"

#include <algorithm>
#include <cstring>
#include <immintrin.h>
#include <vector>

#include "journey/kernels/thread_pool.h"

namespace journey {
namespace {

// The sum of the bytes: the bytes before the first 64-byte line boundary one by one, then whole
// lines four at a time with aligned loads (vpsadbw sums each 8 bytes into a 64-bit lane, four
// independent chains), the rest one by one. Aligned, as a plain read of memory goes line by line:
// unaligned 64-byte loads would each touch two lines (an F32 safetensors file, 32 bytes into a
// line, read at 26.7 GB/s against its GGUF's 31.2 on one thread).
uint64_t fold_portable(const std::byte* p, size_t n) {
    uint64_t s = 0;
    for (size_t i = 0; i < n; ++i) s += uint64_t(p[i]);
    return s;
}

__attribute__((target("avx512f,avx512bw"))) uint64_t fold_avx512(const std::byte* p, size_t n) {
    const __m512i zero = _mm512_setzero_si512();
    __m512i a0 = zero, a1 = zero, a2 = zero, a3 = zero;
    size_t i = std::min(n, size_t(-reinterpret_cast<uintptr_t>(p) % 64));  // to the first line boundary
    for (; i + 256 <= n; i += 256) {
        a0 = _mm512_add_epi64(a0, _mm512_sad_epu8(_mm512_load_si512(p + i), zero));
        a1 = _mm512_add_epi64(a1, _mm512_sad_epu8(_mm512_load_si512(p + i + 64), zero));
        a2 = _mm512_add_epi64(a2, _mm512_sad_epu8(_mm512_load_si512(p + i + 128), zero));
        a3 = _mm512_add_epi64(a3, _mm512_sad_epu8(_mm512_load_si512(p + i + 192), zero));
    }
    alignas(64) uint64_t lanes[8];
    _mm512_store_si512(lanes, _mm512_add_epi64(_mm512_add_epi64(a0, a1), _mm512_add_epi64(a2, a3)));
    uint64_t s = fold_portable(p, std::min(n, size_t(-reinterpret_cast<uintptr_t>(p) % 64))) + fold_portable(p + i, n - i);
    for (uint64_t l : lanes) s += l;
    return s;
}

// The same on AVX2 (CPUs without AVX-512), a line as two aligned 32-byte loads. Without it the
// yardstick was the byte loop, 7.9 GB/s on two threads of this session's AVX2 EPYC, below what
// generation itself read.
__attribute__((target("avx2"))) uint64_t fold_avx2(const std::byte* p, size_t n) {
    const __m256i zero = _mm256_setzero_si256();
    __m256i a[4] = {zero, zero, zero, zero};
    size_t i = std::min(n, size_t(-reinterpret_cast<uintptr_t>(p) % 64));  // to the first line boundary
    for (; i + 256 <= n; i += 256)
        for (int k = 0; k < 8; ++k)
            a[k % 4] = _mm256_add_epi64(a[k % 4], _mm256_sad_epu8(_mm256_load_si256(reinterpret_cast<const __m256i*>(p + i + 32 * k)), zero));
    alignas(32) uint64_t lanes[4];
    _mm256_store_si256(reinterpret_cast<__m256i*>(lanes), _mm256_add_epi64(_mm256_add_epi64(a[0], a[1]), _mm256_add_epi64(a[2], a[3])));
    uint64_t s = fold_portable(p, std::min(n, size_t(-reinterpret_cast<uintptr_t>(p) % 64))) + fold_portable(p + i, n - i);
    for (uint64_t l : lanes) s += l;
    return s;
}

uint64_t fold(const std::byte* p, size_t n) {
    static const bool avx512 = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw");
    static const bool avx2 = __builtin_cpu_supports("avx2");
    return avx512 ? fold_avx512(p, n) : avx2 ? fold_avx2(p, n) : fold_portable(p, n);
}

}  // namespace

uint64_t read_all(std::span<const std::span<const std::byte>> ranges) {
    size_t total = 0;
    for (const auto& r : ranges) total += r.size();
    ThreadPool& pool = thread_pool();
    std::vector<uint64_t> sums(size_t(pool.size()), 0);
    pool.run([&](int i, int n) {
        // bytes [b, e) of the ranges end to end
        const size_t b = total / size_t(n) * size_t(i), e = i + 1 == n ? total : total / size_t(n) * size_t(i + 1);
        size_t at = 0;
        uint64_t s = 0;
        for (const auto& r : ranges) {
            const size_t lo = std::max(at, b), hi = std::min(at + r.size(), e);
            if (lo < hi) s += fold(r.data() + (lo - at), hi - lo);
            at += r.size();
        }
        sums[size_t(i)] = s;
    });
    uint64_t s = 0;
    for (uint64_t x : sums) s += x;
    return s;
}

}  // namespace journey
