#!/usr/bin/env bash
# The machine's ceilings, for the Speed section (run it on an idle machine; best of 3 each):
# - arithmetic per core: 24 independent chains of 512-bit fma (F32, 32 flops each) and of
#   vdpbf16ps (BF16 pairs, 64 flops each);
# - memory read bandwidth: summing a 1 GiB buffer (larger than any cache) with 1 and 2 threads
#   (best of 3), on 4 KiB pages and again on 2 MiB pages (where the kernel gives them), and the access pattern of generating a token at F32 (every weight read once,
#   matrix by matrix, each split between two threads; best and median of 12). On a shared host
#   these vary with the neighbours' load: run it beside the benchmark, not once. Each figure
#   also comes by the threads' own CPU time ("by CPU time"): what the hardware gives while we
#   hold a core, the closer estimate on a busy machine (the wall-clock figure counts the time
#   other processes held it).
set -euo pipefail
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cat > "$dir/peak.cpp" <<'CPP'
#include <immintrin.h>
#include <sys/mman.h>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <thread>
#include <vector>

double thread_cpu_s() {
    timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

// GFLOP/s by the wall clock (first) and by this thread's CPU time (second).
template <class Step>
std::pair<double, double> rate(long n, double flops_per_op, Step step) {
    const auto t0 = std::chrono::steady_clock::now();
    const double c0 = thread_cpu_s();
    step(n);
    const double c = thread_cpu_s() - c0;
    const double w = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return {n * 24.0 * flops_per_op / w / 1e9, n * 24.0 * flops_per_op / c / 1e9};
}

__attribute__((target("avx512f,fma"))) void fma_chains(long n) {
    __m512 a[24];
    for (auto& v : a) v = _mm512_setzero_ps();
    __m512 x = _mm512_set1_ps(1e-9f), w = _mm512_set1_ps(1e-9f);
    for (long k = 0; k < n; ++k) {
#pragma GCC unroll 24
        for (int i = 0; i < 24; ++i) a[i] = _mm512_fmadd_ps(x, w, a[i]);
        asm volatile("" : "+v"(x));
    }
    float s = 0;
    for (auto& v : a) s += _mm512_reduce_add_ps(v);
    asm volatile("" ::"x"(s));
}

__attribute__((target("avx512f,avx512bf16"))) void bf16_chains(long n) {
    __m512 a[24];
    for (auto& v : a) v = _mm512_setzero_ps();
    __m512bh x = (__m512bh)_mm512_set1_epi32(0x30803080), w = x;
    for (long k = 0; k < n; ++k) {
#pragma GCC unroll 24
        for (int i = 0; i < 24; ++i) a[i] = _mm512_dpbf16_ps(a[i], x, w);
        asm volatile("" : "+v"(x));
    }
    float s = 0;
    for (auto& v : a) s += _mm512_reduce_add_ps(v);
    asm volatile("" ::"x"(s));
}

__attribute__((target("avx512f"))) float sum_range(const float* p, size_t n) {
    __m512 a0 = _mm512_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
    for (size_t i = 0; i + 64 <= n; i += 64) {
        a0 = _mm512_add_ps(a0, _mm512_load_ps(p + i));
        a1 = _mm512_add_ps(a1, _mm512_load_ps(p + i + 16));
        a2 = _mm512_add_ps(a2, _mm512_load_ps(p + i + 32));
        a3 = _mm512_add_ps(a3, _mm512_load_ps(p + i + 48));
    }
    return _mm512_reduce_add_ps(_mm512_add_ps(_mm512_add_ps(a0, a1), _mm512_add_ps(a2, a3)));
}

// Best of 3, by the wall clock and by the slower thread's CPU time.
std::pair<double, double> read_gbs(const float* p, size_t n, int threads) {
    double best = 0, best_cpu = 0;
    for (int r = 0; r < 3; ++r) {
        std::vector<std::thread> ts;
        std::vector<float> sums(threads);
        std::vector<double> cpu(threads);
        const auto t0 = std::chrono::steady_clock::now();
        for (int t = 0; t < threads; ++t)
            ts.emplace_back([&, t] {
                const double c0 = thread_cpu_s();
                sums[t] = sum_range(p + n / threads * t, n / threads);
                cpu[t] = thread_cpu_s() - c0;
            });
        for (auto& t : ts) t.join();
        const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        asm volatile("" ::"r"(sums.data()) : "memory");
        best = std::max(best, n * 4.0 / s / 1e9);
        best_cpu = std::max(best_cpu, n * 4.0 / *std::max_element(cpu.begin(), cpu.end()) / 1e9);
    }
    return {best, best_cpu};
}

// A token's pattern: 494 MB (GPT-2 small at F32) as consecutive 2 MB matrices, each split
// between two threads, over and over; the best and the median of 12 passes.
void token_pattern(const float* p) {
    const size_t n = 494000000 / 4, chunk = (2 << 20) / 4;
    std::vector<double> gbs;
    for (int r = 0; r < 12; ++r) {
        float s0 = 0, s1 = 0;
        const auto t0 = std::chrono::steady_clock::now();
        std::thread other([&] {
            for (size_t c = 0; c < n; c += chunk) s1 += sum_range(p + c + std::min(chunk, n - c) / 2, std::min(chunk, n - c) / 2);
        });
        for (size_t c = 0; c < n; c += chunk) s0 += sum_range(p + c, std::min(chunk, n - c) / 2);
        other.join();
        asm volatile("" ::"x"(s0), "x"(s1));
        gbs.push_back(n * 4.0 / std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / 1e9);
    }
    std::sort(gbs.begin(), gbs.end());
    std::printf("read 2 threads, a token's pattern (494 MB in 2 MB matrices): best %.1f GB/s, median %.1f GB/s\n",
                gbs.back(), gbs[gbs.size() / 2]);
}

// MiB of this process on 2 MiB pages (AnonHugePages).
long huge_mib() {
    FILE* f = std::fopen("/proc/self/smaps_rollup", "r");
    if (!f) return 0;
    char line[256];
    long kb = 0;
    while (std::fgets(line, sizeof line, f))
        if (std::sscanf(line, "AnonHugePages: %ld kB", &kb) == 1) break;
    std::fclose(f);
    return kb / 1024;
}

int main() {
    const size_t n = size_t(1) << 28;  // 1 GiB of floats
    // Twice: on 4 KiB pages (a file's mapping, llama.cpp's weights) and on 2 MiB pages where the
    // kernel gives them (MADV_HUGEPAGE: journey's copied weights).
    for (const bool huge : {false, true}) {
        void* m = mmap(nullptr, n * 4, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (m == MAP_FAILED) return 1;
        madvise(m, n * 4, huge ? MADV_HUGEPAGE : MADV_NOHUGEPAGE);
        auto* buf = static_cast<float*>(m);
        std::memset(buf, 0, n * 4);
        std::printf("-- %s\n", huge ? "2 MiB pages" : "4 KiB pages");
        if (huge) std::printf("   (%ld MiB of the 1024 given as huge pages)\n", huge_mib());
        const auto r1 = read_gbs(buf, n, 1), r2 = read_gbs(buf, n, 2);
        std::printf("read 1 thread    %.1f GB/s (by CPU time %.1f)\n", r1.first, r1.second);
        std::printf("read 2 threads   %.1f GB/s (by CPU time %.1f)\n", r2.first, r2.second);
        token_pattern(buf);
        munmap(m, n * 4);
    }

    std::pair<double, double> f{0, 0}, b{0, 0};
    for (int r = 0; r < 3; ++r) f = std::max(f, rate(50000000, 32, fma_chains));
    std::printf("fma (F32)        %.1f GFLOP/s per core (by CPU time %.1f)\n", f.first, f.second);
    if (__builtin_cpu_supports("avx512bf16")) {
        for (int r = 0; r < 3; ++r) b = std::max(b, rate(50000000, 64, bf16_chains));
        std::printf("vdpbf16ps (BF16) %.1f GFLOP/s per core (by CPU time %.1f; %.2fx fma)\n", b.first, b.second, b.second / f.second);
    } else {
        std::printf("vdpbf16ps (BF16) not on this CPU\n");
    }
}
CPP
g++ -O2 -std=c++20 -o "$dir/peak" "$dir/peak.cpp"
"$dir/peak"
